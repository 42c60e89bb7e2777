package checkpoint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Files changed by dsh's own tools, laid over the last snapshot as they were
// before and after, give the trees a walk gives: the same ids, the same
// modes, nothing a walk leaves out (ignored, secret, .git, too big).
func TestLayIsAWalk(t *testing.T) {
	root, s := newRepo(t)
	write(t, root, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := snap(t, s)
	paths := []string{"a.txt", "dir/b.txt", "new/c.txt", "run.sh", "link", "build/out.o", ".env", ".git/config", "dir/big.bin"}
	states := func() map[string]State {
		m := map[string]State{}
		for _, p := range paths {
			st, ok := ReadState(root, p, s.o.MaxFile)
			if ok {
				m[p] = st
			}
		}
		return m
	}
	pre := states()
	write(t, root, "a.txt", "changed\n")
	if err := os.Remove(filepath.Join(root, "dir", "b.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "new/c.txt", "new\n")
	write(t, root, "run.sh", "#!/bin/sh\necho\n")
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "build/out.o", "ignored\n")
	write(t, root, ".env", "KEY=1\n")
	write(t, root, "dir/big.bin", string(make([]byte, 2<<20)))
	post := states()
	if _, ok := post["dir/big.bin"]; ok {
		t.Error("a file over the cap was read")
	}
	before, after, err := s.Lay(context.Background(), base, pre, post)
	if err != nil {
		t.Fatal(err)
	}
	if before != base {
		t.Errorf("nothing changed before: before %s, want the base %s", before, base)
	}
	if walked := snap(t, s); after != walked {
		t.Errorf("laid %v, walked %v", treePaths(t, s, after), treePaths(t, s, walked))
	}
	// A store whose objects git packed is laid over by git, alike.
	pack := exec.Command("sh", "-c", `git --git-dir="$1" cat-file --batch-all-objects --batch-check='%(objectname)' |
		git --git-dir="$1" pack-objects -q "$1/objects/pack/pack" >/dev/null && git --git-dir="$1" prune-packed`, "sh", s.dir)
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("packing the store: %v: %s", err, out)
	}
	fresh, err := Open(s.dir, root, "s1", Options{MaxFile: 1 << 20}) // nothing decoded yet
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.readTree(base); !errors.Is(err, errPacked) {
		t.Fatalf("the base is still loose after a repack: %v", err)
	}
	if b2, a2, err := fresh.Lay(context.Background(), base, pre, post); err != nil || b2 != before || a2 != after {
		t.Errorf("in a packed store: %s, %s, %v; want %s, %s", b2, a2, err, before, after)
	}
	es, err := s.Entries(context.Background(), after, []string{"run.sh", "link"})
	if err != nil {
		t.Fatal(err)
	}
	if es["run.sh"].Mode != "100755" || es["link"].Mode != "120000" {
		t.Errorf("modes: %+v", es)
	}

	// What the user changed since the base, before the tools did, is the
	// "before"'s; the blobs are stored (Blobs reads them back).
	user := map[string]State{"a.txt": {Content: []byte("the user's\n")}}
	before, _, err = s.Lay(context.Background(), base, user, nil)
	if err != nil {
		t.Fatal(err)
	}
	es, err = s.Entries(context.Background(), before, []string{"a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := s.Blobs(context.Background(), []string{es["a.txt"].ID})
	if err != nil || string(blobs[es["a.txt"].ID]) != "the user's\n" {
		t.Errorf("the before holds a.txt as %q, %v", blobs[es["a.txt"].ID], err)
	}
}

// A snapshot the last caller stops waiting for is stopped, and has ended
// when the wait does; the next one is taken as usual.
func TestSnapshotStopsWithItsLastCaller(t *testing.T) {
	root, s := newRepo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Snapshot(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	write(t, root, "a.txt", "after\n")
	tree := snap(t, s)
	es, err := s.Entries(context.Background(), tree, []string{"a.txt"})
	if err != nil || es["a.txt"].ID == "" {
		t.Fatalf("the next snapshot: %+v, %v", es, err)
	}
	if _, err := os.Stat(s.index + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the index lock is left: %v", err)
	}
}

// A walk that finds few files changed lays them over the index's tree
// without updating the index: a file grown past the cap, or renamed like a
// secret, leaves the tree as git's update-index would make it leave it.
func TestWalkLaysWhatLeaves(t *testing.T) {
	root, s := newRepo(t)
	write(t, root, "grows.txt", "small\n")
	write(t, root, "key.txt", "not yet a secret\n")
	snap(t, s)
	write(t, root, "grows.txt", string(make([]byte, 2<<20)))
	if err := os.Rename(filepath.Join(root, "key.txt"), filepath.Join(root, "id_rsa")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "dir/b.txt", "changed\n")
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := treePaths(t, s, sn.Tree)
	if want := []string{".gitignore", "a.txt", "dir/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("the tree holds %q, want %q (skipped %q, secrets %q)", got, want, sn.Skipped, sn.Secrets)
	}
}
