//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package session

import "os"

// lockFile is a no-op where flock(2) is missing: a second writer is not detected.
func lockFile(*os.File) error { return nil }

// locked cannot tell without flock(2); sessions are listed as not live.
func locked(string) bool { return false }
