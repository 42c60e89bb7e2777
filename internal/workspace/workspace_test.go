package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout builds root/{a.txt, sub/b.txt} and an outside directory with secret.txt,
// and returns the workspace root (symlinks resolved) and the outside directory.
func layout(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "a.txt"), filepath.Join(root, "sub", "b.txt"), filepath.Join(outside, "secret.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestNew(t *testing.T) {
	root, _ := layout(t)
	// A root reached through a symlink is stored resolved, so containment checks
	// compare real paths.
	link := filepath.Join(filepath.Dir(root), "rootlink")
	symlink(t, root, link)
	ws, err := New(link, false)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root() != root || ws.Cwd() != root {
		t.Fatalf("root %q cwd %q, want %q", ws.Root(), ws.Cwd(), root)
	}
	if _, err := New(filepath.Join(root, "a.txt"), false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("file as root: %v", err)
	}
	if _, err := New(filepath.Join(root, "missing"), false); err == nil {
		t.Fatal("missing root accepted")
	}
}

func TestResolve(t *testing.T) {
	root, outside := layout(t)
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "escape.txt"))
	symlink(t, outside, filepath.Join(root, "escapedir"))
	symlink(t, filepath.Join(outside, "nothing-yet"), filepath.Join(root, "dangling"))
	symlink(t, "../../outside/new.txt", filepath.Join(root, "sub", "dangling-rel"))
	symlink(t, filepath.Join(root, "sub"), filepath.Join(root, "inner"))
	symlink(t, filepath.Join(root, "gone"), filepath.Join(root, "dangling-inside"))
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string // want "" means refused as outside
	}{
		{"a.txt", filepath.Join(root, "a.txt")},
		{"sub/b.txt", filepath.Join(root, "sub", "b.txt")},
		{"./sub/../a.txt", filepath.Join(root, "a.txt")},
		{filepath.Join(root, "a.txt"), filepath.Join(root, "a.txt")},
		{root, root},
		{".", root},
		{"new/dir/file.txt", filepath.Join(root, "new", "dir", "file.txt")}, // not there yet
		{"inner/b.txt", filepath.Join(root, "inner", "b.txt")},              // symlink inside, kept as spelled
		{"dangling-inside", filepath.Join(root, "dangling-inside")},
		{"..", ""},
		{"../outside/secret.txt", ""},
		{filepath.Join(outside, "secret.txt"), ""},
		{"/etc/hosts", ""},
		{root + "x/a.txt", ""}, // a sibling sharing the root's prefix
		{"escape.txt", ""},
		{"escapedir/secret.txt", ""},
		{"escapedir/new.txt", ""},
		{"dangling", ""},
		{"sub/dangling-rel", ""},
	} {
		got, err := ws.Resolve(tc.in)
		if tc.want == "" {
			if !errors.Is(err, ErrOutside) {
				t.Errorf("Resolve(%q) = %q, %v; want an ErrOutside refusal", tc.in, got, err)
			} else if !strings.Contains(err.Error(), "--allow-outside") || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("Resolve(%q): unclear message %q", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ws.Resolve(""); err == nil || errors.Is(err, ErrOutside) {
		t.Errorf("empty path: %v", err)
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	root, _ := layout(t)
	symlink(t, "loop2", filepath.Join(root, "loop1"))
	symlink(t, "loop1", filepath.Join(root, "loop2"))
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Resolve("loop1/x"); err == nil {
		t.Fatal("a symlink loop resolved")
	}
}

func TestAllowOutside(t *testing.T) {
	root, outside := layout(t)
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "escape.txt"))
	ws, err := New(root, true)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"../outside/secret.txt":              filepath.Join(outside, "secret.txt"),
		filepath.Join(outside, "secret.txt"): filepath.Join(outside, "secret.txt"),
		"escape.txt":                         filepath.Join(root, "escape.txt"),
	} {
		if got, err := ws.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSetCwd(t *testing.T) {
	root, outside := layout(t)
	symlink(t, outside, filepath.Join(root, "escapedir"))
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.SetCwd("sub"); err != nil {
		t.Fatal(err)
	}
	if ws.Cwd() != filepath.Join(root, "sub") {
		t.Fatalf("cwd = %q", ws.Cwd())
	}
	// Relative paths now resolve against the new cwd, and may climb back to the root.
	if got, err := ws.Resolve("b.txt"); err != nil || got != filepath.Join(root, "sub", "b.txt") {
		t.Fatalf("Resolve(b.txt) = %q, %v", got, err)
	}
	if got, err := ws.Resolve("../a.txt"); err != nil || got != filepath.Join(root, "a.txt") {
		t.Fatalf("Resolve(../a.txt) = %q, %v", got, err)
	}
	if _, err := ws.Resolve("../../outside/secret.txt"); !errors.Is(err, ErrOutside) {
		t.Fatalf("climbing out from sub: %v", err)
	}
	// Refusals leave the cwd where it was.
	for _, dir := range []string{"../../outside", "missing", "b.txt", "../escapedir"} {
		if err := ws.SetCwd(dir); err == nil {
			t.Errorf("SetCwd(%q) accepted", dir)
		}
		if ws.Cwd() != filepath.Join(root, "sub") {
			t.Fatalf("SetCwd(%q) moved the cwd to %q", dir, ws.Cwd())
		}
	}
	if err := ws.SetCwd(root); err != nil || ws.Cwd() != root {
		t.Fatalf("back to root: %v, %q", err, ws.Cwd())
	}
}

func TestContainsAndRel(t *testing.T) {
	root, outside := layout(t)
	ws, err := New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		root:                          true,
		filepath.Join(root, "a.txt"):  true,
		filepath.Join(root, "x", "y"): true,
		root + "x":                    false,
		filepath.Dir(root):            false,
		filepath.Join(outside, "s"):   false,
	} {
		if got := ws.Contains(p); got != want {
			t.Errorf("Contains(%q) = %v, want %v", p, got, want)
		}
	}
	for p, want := range map[string]string{
		filepath.Join(root, "sub", "b.txt"): filepath.Join("sub", "b.txt"),
		root:                                ".",
		filepath.Join(outside, "s"):         filepath.Join(outside, "s"),
	} {
		if got := ws.Rel(p); got != want {
			t.Errorf("Rel(%q) = %q, want %q", p, got, want)
		}
	}
}
