//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

var errLocked = errors.New("the session is open in another dsh process")

// lockWait is how long a lock held by nobody lasting is waited for.
const lockWait = 100 * time.Millisecond

// lockFile takes the writer's lock on an open log, so that two processes never
// append to (or repair) the same session. The lock goes with the file's close,
// but only once every copy of the descriptor is closed: a command or git this
// process starts holds a copy from its fork until its exec (the descriptor is
// close-on-exec), so a log closed and opened again at that moment — a fork
// opening the copy it just wrote — finds it locked for a moment. A lock still
// held after lockWait is someone's.
func lockFile(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for pause := time.Millisecond; ; pause *= 2 {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			break
		}
		time.Sleep(pause)
	}
	if h := holder(f); h != "" {
		return fmt.Errorf("%w (%s): leave it there first, or open another session", errLocked, h)
	}
	return errLocked
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
