//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

var errLocked = errors.New("the session is open in another dsh process")

// lockFile takes the writer's lock on an open log, so that two processes never
// append to (or repair) the same session. The lock goes with the file's close.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if h := holder(f); h != "" {
			return fmt.Errorf("%w (%s): leave it there first, or open another session", errLocked, h)
		}
		return errLocked
	}
	return err
}

// locked reports whether a writer holds the log at path open.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}
