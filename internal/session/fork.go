package session

import (
	"errors"
	"fmt"
)

// errForkPoint ends the scan of the log being forked.
var errForkPoint = errors.New("fork point")

// Fork starts the session id in dir with the records of the log at path that
// come before the first one at reports true, and those after it that late
// (nil: none) reports belong before it (a record logged in the background
// for what came before): a new conversation that shares the old one's
// beginning, the old one left as it is. The header keeps the workspace and
// the system prompt, so the fork sends what the original sent.
func Fork(path, dir, id string, at, late func(Record) bool) (err error) {
	cut := false
	var out *Log
	defer func() {
		if out != nil {
			err = errors.Join(err, out.Close())
		}
	}()
	err = Scan(path, func(r Record) error {
		if r.Type == TypeHeader {
			out, err = Create(dir, id, r.Cwd, Options{System: r.System, ProgressCap: -1})
			return err
		}
		if !cut && at(r) {
			if late == nil {
				return errForkPoint
			}
			cut = true
		}
		if cut && !late(r) {
			return nil
		}
		if r.Type == TypeProgress {
			return nil // replay folds it away; the result holds the output
		}
		_, err := out.Put(r)
		return err
	})
	if errors.Is(err, errForkPoint) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("fork %s: %w", path, err)
	}
	return nil
}
