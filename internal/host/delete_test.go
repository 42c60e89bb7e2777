package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestDeleteSession: a session's log goes with its subagents' (and theirs),
// the other sessions' stay; a live one is refused and nothing of it goes; an
// id with no log, or not an id at all, is ErrNoSession.
func TestDeleteSession(t *testing.T) {
	dir := t.TempDir()
	create := func(id, parent string) *session.Log {
		t.Helper()
		o := session.Options{}
		if parent != "" {
			o.Parent = &session.Parent{Session: parent, CallID: "t1"}
		}
		l, err := session.Create(dir, id, "/", o)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, s := range [][2]string{{"a", ""}, {"a-kid", "a"}, {"a-grandkid", "a-kid"}, {"b", ""}, {"b-kid", "b"}} {
		if err := create(s[0], s[1]).Close(); err != nil {
			t.Fatal(err)
		}
	}
	live := create("c", "")
	left := func() []string {
		t.Helper()
		all, err := session.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, in := range all {
			ids = append(ids, in.ID)
		}
		slices.Sort(ids)
		return ids
	}

	if err := DeleteSession(dir, "a"); err != nil {
		t.Fatal(err)
	}
	if got, want := left(), []string{"b", "b-kid", "c"}; !slices.Equal(got, want) {
		t.Errorf("after deleting a: %q, want %q", got, want)
	}
	if err := DeleteSession(dir, "c"); err == nil {
		t.Error("a live session was deleted")
	}
	if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); err != nil {
		t.Errorf("the refused delete removed the log: %v", err)
	}
	for _, id := range []string{"a", "../b", "nope"} {
		if err := DeleteSession(dir, id); !errors.Is(err, ErrNoSession) {
			t.Errorf("DeleteSession(%q) = %v, want ErrNoSession", id, err)
		}
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if err := DeleteSession(dir, "c"); err != nil {
		t.Errorf("the closed session: %v", err)
	}
}
