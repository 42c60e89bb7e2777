//go:build race

package acp_test

// raceFlags builds dsh with the race detector when the tests run with it, so
// that the conformance tests check the agent's own concurrency too.
var raceFlags = []string{"-race"}
