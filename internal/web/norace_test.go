//go:build !race

package web

// raceNote marks figures measured with the race detector, which slows the server.
const raceNote = ""
