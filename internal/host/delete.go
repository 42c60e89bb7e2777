package host

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dsh-dev/dsh/internal/session"
)

// ErrNoSession is DeleteSession's error for an id with no log in the directory.
var ErrNoSession = errors.New("no such session")

// DeleteSession removes the log of session id from dir, and those of its
// subagents' sessions with it: a deleted thread leaves nothing that lists or
// replays. A session open in any dsh process is refused (its writer holds the
// log's lock); close it first. The workspace's checkpoints are shared with the
// other sessions in it and stay.
func DeleteSession(dir, id string) error {
	if !session.ValidID(id) {
		return fmt.Errorf("%w %q", ErrNoSession, id)
	}
	all, err := session.List(dir)
	if err != nil {
		return err
	}
	found := false
	kids := map[string][]string{} // parent → children
	for _, in := range all {
		found = found || in.ID == id
		if in.Parent != nil {
			kids[in.Parent.Session] = append(kids[in.Parent.Session], in.ID)
		}
	}
	if !found {
		return fmt.Errorf("%w %q", ErrNoSession, id)
	}
	// The thread's own log goes first: while it is live nothing is removed.
	todo := []string{id}
	for len(todo) > 0 {
		next := todo[0]
		todo = append(todo[1:], kids[next]...)
		if err := session.Remove(filepath.Join(dir, next+".jsonl")); err != nil {
			return err
		}
	}
	return nil
}
