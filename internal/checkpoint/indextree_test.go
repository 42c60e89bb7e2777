package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A new process's first walk (a Store opened again on an index, or on one
// seeded from another session's) lays what changed over the tree the index
// was last written to, without rewriting the index; a note that does not
// match the index is not used. Each gives the tree a fresh store's walk does.
func TestFirstWalkLaysOverTheIndexsTree(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index string // the second store's index
		spoil func(t *testing.T, index string)
		laid  bool // the index is left as the first store wrote it
	}{
		{"same index", "s1", nil, true},
		{"seeded index", "s2", nil, true},
		{"torn note", "s1", func(t *testing.T, index string) {
			b, err := os.ReadFile(index + treeSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index+treeSuffix, b[:len(b)/2], 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"index changed since", "s1", func(t *testing.T, index string) {
			b, err := os.ReadFile(index + treeSuffix)
			if err != nil {
				t.Fatal(err)
			}
			b[0] ^= 1 // another checksum: as if the index was written after the note
			if err := os.WriteFile(index+treeSuffix, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, s := newRepo(t)
			write(t, root, ".env", "KEY=1\n")
			snap(t, s)
			if tc.spoil != nil {
				tc.spoil(t, s.index)
			}
			write(t, root, "a.txt", "changed\n")
			write(t, root, "new/c.txt", "c\n")
			if err := os.Remove(filepath.Join(root, "dir", "b.txt")); err != nil {
				t.Fatal(err)
			}
			idx := filepath.Join(s.dir, "indexes", tc.index)
			again, err := Open(s.dir, root, tc.index, s.o)
			if err != nil {
				t.Fatal(err)
			}
			was, err := os.Stat(idx)
			if err != nil {
				t.Fatal(err)
			}
			got := snap(t, again)
			now, err := os.Stat(idx)
			if err != nil {
				t.Fatal(err)
			}
			if laid := sameFile(was, now); laid != tc.laid {
				t.Errorf("the index was left as it was: %v, want %v", laid, tc.laid)
			}
			fresh, err := Open(filepath.Join(t.TempDir(), "store"), root, "s9", s.o)
			if err != nil {
				t.Fatal(err)
			}
			if want := snap(t, fresh); got != want {
				t.Errorf("the tree is %q %v, a fresh store's %q %v", got, treePaths(t, again, got), want, treePaths(t, fresh, want))
			}
			if paths := treePaths(t, again, got); slices.Contains(paths, ".env") || !slices.Contains(paths, "new/c.txt") {
				t.Errorf("the tree holds %q", paths)
			}
		})
	}
}

// A store's first walk, with no index yet, sweeps nothing: it runs no
// ls-files of the (absent) index's entries.
func TestColdWalkSweepsNothing(t *testing.T) {
	root, s := newRepo(t)
	write(t, root, ".env", "KEY=1\n")
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sn.Secrets, []string{".env"}) {
		t.Errorf("secrets = %q", sn.Secrets)
	}
	if got, want := treePaths(t, s, sn.Tree), []string{".gitignore", "a.txt", "dir/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("the tree holds %q, want %q", got, want)
	}
}

// What the sweep of a reopened index takes out of it stays out at the walks
// after: the index is rewritten without it, not a tree laid over it.
func TestSweptStaysOutOfLaterWalks(t *testing.T) {
	root, s := newRepo(t)
	write(t, root, "data/x.db", "x\n")
	snap(t, s)
	o := s.o
	o.Ignore = []string{"*.db"}
	again, err := Open(s.dir, root, "s1", o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		write(t, root, "a.txt", fmt.Sprintf("walk %d\n", i))
		if paths := treePaths(t, again, snap(t, again)); slices.Contains(paths, "data/x.db") {
			t.Errorf("walk %d: the tree holds %q", i, paths)
		}
	}
}

// The files two trees differ in, read without git, are the ones git's
// diff-tree lists: changed, added, removed, a mode changed, a file become
// a directory, from and to the empty tree.
func TestChangedPathsIsDiffTree(t *testing.T) {
	root, s := newRepo(t)
	write(t, root, "x/y.txt", "y\n")
	write(t, root, "f", "a file\n")
	from := snap(t, s)
	write(t, root, "a.txt", "changed\n")
	write(t, root, "new/deep/c.txt", "c\n")
	if err := os.RemoveAll(filepath.Join(root, "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "dir", "b.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	to := snap(t, s)
	// The file f become a directory, laid over it (a walk of that fails:
	// git's update-index will not replace a file it holds by a directory).
	id := objectID("blob", []byte("inside\n"), to)
	if err := s.store("blob", id, []byte("inside\n")); err != nil {
		t.Fatal(err)
	}
	to, err := s.edit(to, map[string]Entry{"f": {}, "f/inside.txt": {Mode: "100644", ID: id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{from, to}, {to, from}, {EmptyTree, to}, {from, EmptyTree}, {to, to}} {
		got, err := s.ChangedPaths(context.Background(), pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		cs, err := s.Changes(context.Background(), pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range cs {
			want = append(want, c.Path)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s..%s: %q, git's diff-tree %q", pair[0][:7], pair[1][:7], got, want)
		}
	}
}

// A file the index holds that a command made a directory is walked like
// any change: the walk does not fail, and the tree holds the directory's
// files, at the first walk after and the next.
func TestFileBecomeADirectoryIsWalked(t *testing.T) {
	for _, many := range []bool{false, true} {
		root, s := newRepo(t)
		write(t, root, "f", "a file\n")
		snap(t, s)
		if err := os.Remove(filepath.Join(root, "f")); err != nil {
			t.Fatal(err)
		}
		write(t, root, "f/inside.txt", "now a directory\n")
		if many { // past what a walk lays over the index's tree
			for i := range maxLaid + 1 {
				write(t, root, fmt.Sprintf("more/%d.txt", i), "x\n")
			}
		}
		for i := range 2 {
			sn, err := s.Snapshot(context.Background())
			if err != nil {
				t.Fatalf("many %v, walk %d: %v", many, i, err)
			}
			if paths := treePaths(t, s, sn.Tree); !slices.Contains(paths, "f/inside.txt") || slices.Contains(paths, "f") {
				t.Errorf("many %v, walk %d: the tree holds %q", many, i, paths)
			}
		}
	}
}
