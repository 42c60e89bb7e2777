package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo is a workspace that is a git repository of the user's, with one commit.
func newRepo(t *testing.T) (root string, s *Store) {
	t.Helper()
	root = t.TempDir()
	git(t, root, "init", "-q")
	write(t, root, ".gitignore", "build/\n")
	write(t, root, "a.txt", "one\ntwo\n")
	write(t, root, "dir/b.txt", "bee\n")
	git(t, root, "add", "-A")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	s, err := Open(filepath.Join(t.TempDir(), "store"), root, "s1", Options{MaxFile: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return root, s
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func snap(t *testing.T, s *Store) string {
	t.Helper()
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sn.Tree
}

func TestUndoSpanRestoresAndKeepsUserChanges(t *testing.T) {
	root, s := newRepo(t)
	head := git(t, root, "rev-parse", "HEAD")
	status := git(t, root, "status", "--porcelain")
	before := snap(t, s)
	// The "agent": an edit, a created file, a deleted file, a removed directory.
	write(t, root, "a.txt", "one\nTWO\n")
	write(t, root, "new/gen.go", "package gen\n")
	if err := os.RemoveAll(filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "kept.txt", "agent\n")
	after := snap(t, s)
	// The user, since: kept.txt is theirs now.
	write(t, root, "kept.txt", "user\n")
	now := snap(t, s)
	p, err := s.Plan(context.Background(), now, []Span{{before, after}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Files {
		got = append(got, f.Path+map[bool]string{true: " (user)"}[f.User])
	}
	want := []string{"a.txt", "dir/b.txt", "kept.txt (user)", "new/gen.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("plan = %q, want %q", got, want)
	}
	done, err := s.Apply(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done, []string{"a.txt", "dir/b.txt", "new/gen.go"}) {
		t.Errorf("applied %q", done)
	}
	if got := read(t, root, "a.txt"); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := read(t, root, "dir/b.txt"); got != "bee\n" {
		t.Errorf("dir/b.txt = %q", got)
	}
	if got := read(t, root, "kept.txt"); got != "user\n" {
		t.Errorf("kept.txt = %q: the user's change was overwritten", got)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("the created directory is still there: %v", err)
	}
	// The user's repository saw nothing of it.
	if h := git(t, root, "rev-parse", "HEAD"); h != head {
		t.Errorf("HEAD moved: %s", h)
	}
	if st := git(t, root, "status", "--porcelain"); st != status+"?? kept.txt\n" {
		t.Errorf("git status = %q", st)
	}
}

func TestIgnoredAndBigFilesStayOut(t *testing.T) {
	root, s := newRepo(t)
	// A 1 GB build directory (sparse) with many files: ignored by .gitignore.
	if err := os.MkdirAll(filepath.Join(root, "build", "obj"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, "build", "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	for i := range 2000 {
		write(t, root, filepath.Join("build", "obj", strings.Repeat("o", 1+i%7)+string(rune('a'+i%26))+".o"+string(rune('0'+i%10))), "x")
	}
	// The repository's own info/exclude counts too; a big file not ignored is
	// left out, and said so.
	write(t, root, ".git/info/exclude", "secret.env\n")
	write(t, root, "secret.env", "KEY=1\n")
	big := make([]byte, 2<<20)
	if err := os.WriteFile(filepath.Join(root, "big.dat"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sn.Skipped, []string{"big.dat"}) {
		t.Errorf("skipped = %q", sn.Skipped)
	}
	cs, err := s.Changes(context.Background(), EmptyTree, sn.Tree)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range cs {
		paths = append(paths, c.Path)
	}
	if !slices.Equal(paths, []string{".gitignore", "a.txt", "dir/b.txt"}) {
		t.Errorf("the tree holds %q", paths)
	}
}

// dsh's own files inside the workspace (the store, the session logs) are never
// part of a snapshot, so an undo cannot take them back.
func TestOwnFilesStayOut(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "a\n")
	write(t, root, "state/sessions/s1.jsonl", "{}\n")
	s, err := Open(filepath.Join(root, "state", "sessions", "checkpoints", "k"), root, "s1",
		Options{Exclude: []string{filepath.Join(root, "state", "sessions")}})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Changes(context.Background(), EmptyTree, sn.Tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Path != "a.txt" {
		t.Errorf("the tree holds %+v", cs)
	}
}

func TestSymlinkCannotLeadOut(t *testing.T) {
	root, s := newRepo(t)
	// dir becomes a link to a directory outside: the restore must not write there.
	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	p := Plan{Files: []File{{Path: "dir/b.txt", Want: Entry{Mode: "100644", ID: "x"}, New: []byte("bee\n")}}}
	if _, err := s.Apply(p, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "b.txt")); err == nil {
		t.Fatal("the restore wrote outside the workspace")
	}
	// The link gave way to the directory the file belongs in.
	if got := read(t, root, "dir/b.txt"); got != "bee\n" {
		t.Errorf("dir/b.txt = %q", got)
	}
}

// A snapshot past its bound is ErrTimeout, and leaves no lock that would fail
// the next one.
func TestSnapshotTimeout(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s)
	write(t, root, "a.txt", "changed\n")
	quick, err := Open(s.dir, root, "s1", Options{Timeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := quick.Snapshot(context.Background()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if _, err := os.Stat(s.index + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the index lock is left: %v", err)
	}
	snap(t, s)
}

// Snapshots asked for at the same time are taken together, yet each holds what
// was written before it was asked for.
func TestConcurrentSnapshots(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s)
	const n = 20
	trees := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("f%d.txt", i)
			if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
				t.Error(err)
				return
			}
			sn, err := s.Snapshot(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			es, err := s.Entries(context.Background(), sn.Tree, []string{name})
			if err != nil {
				t.Error(err)
				return
			}
			if es[name].ID == "" {
				t.Errorf("the snapshot after %s was written does not hold it", name)
			}
			trees[i] = sn.Tree
		})
	}
	wg.Wait()
	// Unchanged since: the same tree, whether or not it is written again.
	if got, want := snap(t, s), snap(t, s); got != want {
		t.Errorf("two snapshots of an unchanged workspace: %s, %s", got, want)
	}
	if !slices.Contains(trees, snap(t, s)) {
		t.Errorf("the last concurrent snapshot %v is not the workspace's now", trees)
	}
}

// treePaths lists the files a tree holds.
func treePaths(t *testing.T, s *Store, tree string) []string {
	t.Helper()
	cs, err := s.Changes(context.Background(), EmptyTree, tree)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range cs {
		paths = append(paths, c.Path)
	}
	return paths
}

// A command may plant anything at .git/info/exclude, which every snapshot
// reads: a link to /dev/zero grew one to 2 GB, a FIFO hung it. Each is now
// left out with a notice, and the snapshot is taken all the same.
func TestPlantedExcludeIsReadSafely(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "rules")
	if err := os.WriteFile(outside, []byte("a.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		plant  func(path string) error
		notice string
		want   []string
	}{
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "symlink to /dev/zero",
			[]string{".gitignore", "a.txt", "dir/b.txt"}},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file",
			[]string{".gitignore", "a.txt", "dir/b.txt"}},
		{"link out of the repository", func(p string) error { return os.Symlink(outside, p) }, "symlink to " + outside,
			[]string{".gitignore", "a.txt", "dir/b.txt"}},
		{"over the cap", func(p string) error {
			return os.WriteFile(p, append([]byte("a.txt\n"), bytes.Repeat([]byte("# padding\n"), maxExclude/10+1)...), 0o644)
		}, "only the first 1024 KiB", []string{".gitignore", "dir/b.txt"}},
		{"the repository's own rules", func(p string) error { return os.WriteFile(p, []byte("a.txt\n"), 0o644) }, "",
			[]string{".gitignore", "dir/b.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, s := newRepo(t)
			p := filepath.Join(root, ".git", "info", "exclude")
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := tt.plant(p); err != nil {
				t.Fatal(err)
			}
			// A hang fails the test rather than the run.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sn, err := s.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.notice == "" && sn.Notice != "" || !strings.Contains(sn.Notice, tt.notice) {
				t.Errorf("notice = %q, want one saying %q", sn.Notice, tt.notice)
			}
			if got := treePaths(t, s, sn.Tree); !slices.Equal(got, tt.want) {
				t.Errorf("the tree holds %q, want %q", got, tt.want)
			}
			if fi, err := os.Stat(filepath.Join(s.dir, "info", "exclude")); err != nil || fi.Size() > maxExclude {
				t.Errorf("the store's exclude: %v, %v", fi, err)
			}
		})
	}
}

// A FIFO among the workspace's .gitignore files blocks git itself: the
// snapshot still ends, at its bound, and leaves nothing that would fail the
// next one once the FIFO is gone.
func TestFIFOGitignoreIsBounded(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s) // warm: the short bound applies
	if err := syscall.Mkfifo(filepath.Join(root, "dir", ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	quick, err := Open(s.dir, root, "s1", Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := quick.Snapshot(context.Background()); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if err := os.Remove(filepath.Join(root, "dir", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	snap(t, s)
}

// Secrets that no ignore rule covers are not copied out of the repository;
// the snapshot says which it left out. The user's own patterns count too.
func TestSecretsStayOut(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.txt", ".env", ".env.local", ".env.example", "certs/server.PEM", "keys/id_rsa",
		"keys/id_rsa.pub", "app/credentials.json", "data/cache.sqlite", "tls.key"} {
		write(t, root, f, "x\n")
	}
	s, err := Open(filepath.Join(t.TempDir(), "store"), root, "s1", Options{Ignore: []string{"*.sqlite"}})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".env", ".env.local", "app/credentials.json", "certs/server.PEM", "keys/id_rsa", "tls.key"}
	if got := slices.Sorted(slices.Values(sn.Secrets)); !slices.Equal(got, want) {
		t.Errorf("secrets left out = %q, want %q", got, want)
	}
	if got, want := treePaths(t, s, sn.Tree), []string{".env.example", "a.txt", "keys/id_rsa.pub"}; !slices.Equal(got, want) {
		t.Errorf("the tree holds %q, want %q", got, want)
	}
	// Unchanged: the same tree, still without them.
	if again := snap(t, s); again != sn.Tree {
		t.Errorf("an unchanged workspace gave %s, then %s", sn.Tree, again)
	}
}

// What an index already holds from before (a seeded index, or one written
// before a rule) is swept out: a secret, and a file the user's patterns now
// leave out.
func TestIndexIsSweptOfWhatItMustNotHold(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a.txt", ".env", "data/x.db"} {
		write(t, root, f, "x\n")
	}
	dir := filepath.Join(t.TempDir(), "store")
	old, err := Open(dir, root, "s1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// As an older dsh did: everything added.
	if _, err := old.run(context.Background(), []byte("a.txt\x00.env\x00data/x.db\x00"), "update-index", "-z", "--add", "--stdin"); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, root, "s1", Options{Ignore: []string{"*.db"}})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := treePaths(t, s, sn.Tree), []string{"a.txt"}; !slices.Equal(got, want) {
		t.Errorf("the tree holds %q, want %q", got, want)
	}
	if !slices.Equal(sn.Secrets, []string{".env"}) {
		t.Errorf("secrets = %q", sn.Secrets)
	}
}

// The store's own exclude file, when the store is inside the workspace, is
// in reach of a command too: a FIFO there neither hangs the read nor the
// write of it.
func TestStoreExcludeFIFO(t *testing.T) {
	root, s := newRepo(t)
	snap(t, s)
	p := filepath.Join(s.dir, "info", "exclude")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, root, "a.txt", "changed\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails the test
	defer cancel()
	if _, err := s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the store's exclude is %v, %v; want a regular file", fi, err)
	}
}

// A file written while a walk reads it fails git's update-index ("short
// read"); the walk is taken again rather than given up, which left the
// prompt with nothing to undo.
func TestWalkTakenAgainWhenAFileChangesUnderIt(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	once := filepath.Join(bin, "once")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
	if [ "$a" = --add ] && mkdir %q 2>/dev/null; then
		echo "error: short read while indexing a.txt" >&2
		echo "fatal: Unable to process path a.txt." >&2
		exit 128
	fi
done
exec %q "$@"
`, once, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	root, s := newRepo(t)
	write(t, root, "a.txt", "changed\n")
	tree := snap(t, s)
	if _, err := os.Stat(once); err != nil {
		t.Fatal("the walk never ran update-index --add: the test tests nothing")
	}
	if got := git(t, root, "--git-dir", s.dir, "show", tree+":a.txt"); got != "changed\n" {
		t.Errorf("a.txt in the walk taken again = %q", got)
	}
}
