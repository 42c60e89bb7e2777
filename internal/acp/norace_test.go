//go:build !race

package acp_test

var raceFlags []string
