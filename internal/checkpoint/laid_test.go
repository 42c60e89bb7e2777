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
// file written just before a walk is read again at the next, whatever its
// stat says.
func TestLaidFilesReadAgainOnlyWhenChanged(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s) // the index written: later files are laid over its tree
	old := time.Now().Add(-time.Hour)
	write(t, root, "settled.txt", "AAAA\n")
	write(t, root, "fresh.txt", "aaaa\n")
	stamp := func(p string, at time.Time) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(root, p), at, at); err != nil {
			t.Fatal(err)
		}
	}
	stamp("settled.txt", old)
	freshAt := time.Now()
	stamp("fresh.txt", freshAt)
	tree := snap(t, s)
	if got := content(t, s, tree, "settled.txt") + content(t, s, tree, "fresh.txt"); got != "AAAA\naaaa\n" {
		t.Fatalf("first walk: %q", got)
	}

	// The same size and times, other bytes: the settled file's stat vouches
	// for what was read, the fresh one's does not.
	write(t, root, "settled.txt", "BBBB\n")
	stamp("settled.txt", old)
	write(t, root, "fresh.txt", "bbbb\n")
	stamp("fresh.txt", freshAt)
	tree = snap(t, s)
	if got := content(t, s, tree, "settled.txt") + content(t, s, tree, "fresh.txt"); got != "AAAA\nbbbb\n" {
		t.Errorf("second walk: %q, want the settled file from its stat, the fresh one read", got)
	}

	// A stat that changed is read again.
	stamp("settled.txt", old.Add(time.Minute))
	tree = snap(t, s)
	if got := content(t, s, tree, "settled.txt"); got != "BBBB\n" {
		t.Errorf("after its time changed: %q", got)
	}
}
