package workspace

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func age(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// The first write to a directory removes the temporary files of interrupted
// writes: dsh's own name shape only, old enough, and not locked by a write in
// progress.
func TestReplaceRemovesStaleTemps(t *testing.T) {
	root, _ := layout(t)
	d := filepath.Join(root, "sub")
	stale := filepath.Join(d, ".b.txt.0123456789abcdef.dsh-tmp")
	young := filepath.Join(d, ".b.txt.fedcba9876543210.dsh-tmp")
	locked := filepath.Join(d, ".c.txt.00000000000000aa.dsh-tmp")
	foreign := []string{".b.txt.0123.dsh-tmp", "b.txt.0123456789abcdef.dsh-tmp", ".b.txt.0123456789ABCDEF.dsh-tmp", ".notes.dsh-tmp"}
	for _, p := range append([]string{stale, young, locked}, foreign...) {
		put(t, filepath.Join(d, filepath.Base(p)), "partial")
	}
	for _, p := range append([]string{stale, locked}, foreign...) {
		age(t, filepath.Join(d, filepath.Base(p)))
	}
	// A write in progress holds its temporary file locked.
	lf, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ws.Locate("sub/new.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := replaceWith(f, "x"); err != nil {
		t.Fatal(err)
	}
	got := names(t, d)
	if slices.Contains(got, filepath.Base(stale)) {
		t.Fatalf("stale temporary file kept: %v", got)
	}
	for _, p := range append([]string{young, locked}, foreign...) {
		if !slices.Contains(got, filepath.Base(p)) {
			t.Errorf("%s removed: %v", filepath.Base(p), got)
		}
	}
}

// TestMain lets the test binary act as a dsh that is killed mid-write.
func TestMain(m *testing.M) {
	if dir := os.Getenv("DSH_TEST_HANG_WRITE"); dir != "" {
		hangWrite(dir)
		return
	}
	os.Exit(m.Run())
}

// hangWrite starts a write of dir/f.txt, says so, and never finishes it.
func hangWrite(dir string) {
	ws, err := New(dir, false)
	if err != nil {
		panic(err)
	}
	f, err := ws.Locate("f.txt")
	if err != nil {
		panic(err)
	}
	_, _ = f.Replace(func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		_ = w.(*bufio.Writer).Flush()
		_, _ = os.Stdout.WriteString("writing\n")
		select {}
	})
}

// A dsh killed with SIGKILL during a write (issue 34: a .dsh-tmp file was
// left in the workspace about once in 15-30 kills) leaves no temporary file:
// it has no name while it is filled. The old file is intact.
func TestKilledWriteLeavesNoTemp(t *testing.T) {
	root, _ := layout(t)
	put(t, filepath.Join(root, "f.txt"), "old\n")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DSH_TEST_HANG_WRITE="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "writing\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper: %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) {
		t.Fatalf("helper: %v", err)
	}
	for _, n := range names(t, root) {
		if isTempName(n) {
			t.Errorf("the killed write left %s: %v", n, names(t, root))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "old\n" {
		t.Fatalf("the old file is %q", b)
	}
}

// Where a file system has no unnamed files, the write goes through a named
// temporary file: the file ends up whole, with its mode kept, and no temporary
// file stays, nor one of a fill that failed.
func TestReplaceNamed(t *testing.T) {
	dir := t.TempDir()
	put(t, filepath.Join(dir, "f.txt"), "old\n")
	if err := os.Chmod(filepath.Join(dir, "f.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	d, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := replaceNamed(d, "f.txt", true, 0o640, func(w io.Writer) error {
		_, err := io.WriteString(w, "new\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("fill failed")
	if err := replaceNamed(d, "g.txt", false, 0o666, func(io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed fill: %v", err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"f.txt"}) {
		t.Errorf("left %v, want f.txt alone", got)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
	fi, _ := os.Stat(filepath.Join(dir, "f.txt"))
	if string(b) != "new\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("f.txt is %q, mode %v", b, fi.Mode())
	}
}
