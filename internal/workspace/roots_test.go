package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestAdditionalRoots: a root added to the workspace is located and confined
// like the root itself — its files reachable, a symlink out of it refused,
// a path in neither refused — and it must be an absolute directory.
func TestAdditionalRoots(t *testing.T) {
	real := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	main, extra, outside := real(t.TempDir()), real(t.TempDir()), real(t.TempDir())
	if err := os.WriteFile(filepath.Join(extra, "lib.go"), []byte("package lib\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(extra, "link")); err != nil {
		t.Fatal(err)
	}
	w, err := New(main, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	if _, err := w.Locate(filepath.Join(extra, "lib.go")); !errors.Is(err, ErrOutside) {
		t.Fatalf("before AddRoot: %v", err)
	}
	if err := w.AddRoot("relative/dir"); err == nil {
		t.Error("a relative directory was added")
	}
	if err := w.AddRoot(filepath.Join(extra, "lib.go")); err == nil {
		t.Error("a file was added as a root")
	}
	if err := w.AddRoot(extra); err != nil {
		t.Fatal(err)
	}
	if err := w.AddRoot(extra); err != nil {
		t.Fatal(err)
	}
	if got := w.Roots(); len(got) != 2 || got[0] != main || got[1] != extra {
		t.Fatalf("Roots = %v", got)
	}
	f, err := w.Locate(filepath.Join(extra, "lib.go"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if _, err := w.Locate(filepath.Join(extra, "link")); !errors.Is(err, ErrOutside) {
		t.Errorf("a symlink out of the additional root: %v", err)
	}
	if _, err := w.Locate(filepath.Join(outside, "secret")); !errors.Is(err, ErrOutside) {
		t.Errorf("a path in neither root: %v", err)
	}
	if err := w.SetCwd(extra); err != nil {
		t.Errorf("cd into the additional root: %v", err)
	}
	if _, err := w.Locate("lib.go"); err != nil {
		t.Errorf("a relative path from there: %v", err)
	}
}
