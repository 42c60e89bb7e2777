//go:build race

package supervisor

// A race-enabled binary sleeps a second at exit (GORACE atexit_sleep_ms):
// race-built supervisors are told not to, so that every command does not take
// a second longer under go test -race.
const raceBuild = true
