package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// content is the file p holds in tree.
func content(t *testing.T, s *Store, tree, p string) string {
	t.Helper()
	es, err := s.Entries(context.Background(), tree, []string{p})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := s.Blobs(context.Background(), []string{es[p].ID})
	if err != nil {
		t.Fatal(err)
	}
	return string(bs[es[p].ID])
}

// A file a walk laid over the index's tree is not read again while its stat
// is what it was, once it was left alone long enough before it was read; a
// file written just before a walk is read again at the next, and so is one
// changed in place with its modification time set back (as touch -d does).
func TestLaidFilesReadAgainOnlyWhenChanged(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s) // the index written: later files are laid over its tree
	old := time.Now().Add(-time.Hour)
	write(t, root, "settled.txt", "AAAA\n")
	write(t, root, "fresh.txt", "aaaa\n")
	if err := os.Chtimes(filepath.Join(root, "settled.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	tree := snap(t, s)
	if got := content(t, s, tree, "settled.txt") + content(t, s, tree, "fresh.txt"); got != "AAAA\naaaa\n" {
		t.Fatalf("first walk: %q", got)
	}
	if _, ok := s.laid["fresh.txt"]; ok {
		t.Error("a file written just before the walk is vouched for by its stat")
	}

	// The settled file is taken from what was read: were that other
	// bytes, the tree would hold them.
	other := Entry{Mode: "100644", ID: objectID("blob", []byte("ZZZZ\n"), tree)}
	if err := s.store("blob", other.ID, []byte("ZZZZ\n")); err != nil {
		t.Fatal(err)
	}
	l, ok := s.laid["settled.txt"]
	if !ok {
		t.Fatal("the settled file is not remembered")
	}
	l.e = other
	s.laid["settled.txt"] = l
	write(t, root, "fresh.txt", "bbbb\n")
	tree = snap(t, s)
	if got := content(t, s, tree, "settled.txt") + content(t, s, tree, "fresh.txt"); got != "ZZZZ\nbbbb\n" {
		t.Errorf("second walk: %q, want the settled file from its stat, the fresh one read", got)
	}

	// Changed in place, its time set back: its change time says so.
	write(t, root, "settled.txt", "BBBB\n")
	if err := os.Chtimes(filepath.Join(root, "settled.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	tree = snap(t, s)
	if got := content(t, s, tree, "settled.txt"); got != "BBBB\n" {
		t.Errorf("after a change with its time set back: %q", got)
	}
}
