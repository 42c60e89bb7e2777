package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadProjectFile attacks the reading of a repository's own files with the
// links of issue 19: out to a key, out to /dev/zero, a FIFO, a directory link out.
func TestReadProjectFile(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	key := filepath.Join(home, "id_rsa")
	mustWrite(t, key, "-----BEGIN OPENSSH PRIVATE KEY-----")
	mustWrite(t, filepath.Join(root, "AGENTS.md"), "be brief")
	mustWrite(t, filepath.Join(root, "big.md"), strings.Repeat("x", 100))
	mustWrite(t, filepath.Join(root, "docs", "real.md"), "inside")
	mustWrite(t, filepath.Join(home, "cmds", "x.md"), "outside")
	for name, target := range map[string]string{
		"key.md": key, "zero.md": "/dev/zero", "inside.md": "docs/real.md",
		"up.md": "../" + filepath.Base(home) + "/id_rsa", "outdir": filepath.Join(home, "cmds"),
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		want string
		err  error
		more bool
	}{
		{rel: "AGENTS.md", want: "be brief"},
		{rel: "inside.md", want: "inside"},
		{rel: "big.md", want: strings.Repeat("x", 10), more: true},
		{rel: "key.md", err: ErrOutside},
		{rel: "up.md", err: ErrOutside},
		{rel: "zero.md", err: ErrOutside},
		{rel: "outdir/x.md", err: ErrOutside},
		{rel: "fifo.md", err: ErrNotRegular},
		{rel: "docs", err: ErrNotRegular},
		{rel: "missing.md", err: fs.ErrNotExist},
	} {
		b, more, err := ReadProjectFile(root, tc.rel, 10)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || b != nil {
				t.Errorf("%s: %q, %v; want an error wrapping %v", tc.rel, b, err, tc.err)
			}
			if errors.Is(tc.err, ErrOutside) && !strings.Contains(err.Error(), "is a symlink to ") {
				t.Errorf("%s: %v does not name the link and where it leads", tc.rel, err)
			}
			continue
		}
		if err != nil || string(b) != tc.want || more != tc.more {
			t.Errorf("%s: %q, %v, %v; want %q, %v", tc.rel, b, more, err, tc.want, tc.more)
		}
	}
}

func TestWalkProject(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(home, "id_rsa"), "KEY")
	mustWrite(t, filepath.Join(root, ".dsh", "commands", "a.md"), "A")
	mustWrite(t, filepath.Join(root, ".dsh", "commands", "git", "b.md"), "B")
	mustWrite(t, filepath.Join(root, ".dsh", "commands", "note.txt"), "T")
	if err := os.Symlink(filepath.Join(home, "id_rsa"), filepath.Join(root, ".dsh", "commands", "key.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(root, ".dsh", "commands", "zero.md")); err != nil {
		t.Fatal(err)
	}
	got, err := WalkProject(root, ".dsh/commands", 1<<10, func(n string) bool { return strings.HasSuffix(n, ".md") })
	if err == nil || !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "key.md") || !strings.Contains(err.Error(), "zero.md") {
		t.Errorf("err = %v, want both links out refused by name", err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Rel+"="+string(e.Data))
	}
	if strings.Join(names, " ") != "a.md=A git/b.md=B" {
		t.Errorf("read %v", names)
	}
	// A commands directory that is itself a link out is refused whole.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, ".dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(other, ".dsh", "commands")); err != nil {
		t.Fatal(err)
	}
	got, err = WalkProject(other, ".dsh/commands", 1<<10, func(string) bool { return true })
	if len(got) != 0 || !errors.Is(err, ErrOutside) {
		t.Errorf("a linked-out directory: %v, %v", got, err)
	}
	if got, err := WalkProject(root, ".claude/commands", 10, func(string) bool { return true }); got != nil || err != nil {
		t.Errorf("a missing directory: %v, %v", got, err)
	}
}

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
