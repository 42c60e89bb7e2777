package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// chainFixture builds the attack: a -> d1/d2 and d1/d2/link -> ../../f,
// which the kernel resolves to ws/f, inside; joining the link's target to the
// path as written (ws/a + ../../f) gives the f beside the workspace, outside.
func chainFixture(t *testing.T) (f *editFixture, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(root, "d1", "d2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d1/d2", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../f", filepath.Join(root, "d1", "d2", "link")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	sess := tool.NewSession("test", ws)
	t.Cleanup(func() { _ = sess.Close() })
	return &editFixture{t: t, root: ws.Root(), sess: sess}, filepath.Join(base, "f")
}

func TestSymlinkChainWritesInside(t *testing.T) {
	for _, c := range []struct {
		name  string
		exist bool
		run   func(f *editFixture)
	}{
		{"write", true, func(f *editFixture) {
			f.read("a/link")
			f.ok(Write(), writeArgs{"a/link", "new\n"})
		}},
		{"edit", true, func(f *editFixture) {
			f.read("a/link")
			f.ok(Edit(), editArgs{Path: "a/link", OldString: "old", NewString: "new"})
		}},
		{"new-file write", false, func(f *editFixture) {
			f.ok(Write(), writeArgs{"a/link", "new\n"})
		}},
		{"new-file edit", false, func(f *editFixture) {
			f.ok(Edit(), editArgs{Path: "a/link", NewString: "new\n"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, outside := chainFixture(t)
			if c.exist {
				f.put("f", "old\n", 0o644)
			}
			c.run(f)
			if _, err := os.Lstat(outside); err == nil {
				t.Fatalf("%s landed outside the workspace", outside)
			}
			if got := f.get("f"); got != "new\n" {
				t.Fatalf("ws/f holds %q", got)
			}
			if fi, err := os.Lstat(f.abs("d1/d2/link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatal("the link was replaced")
			}
		})
	}
}

// A chain that leaves the workspace is refused for every tool, reads included.
func TestSymlinkChainLeavingIsRefused(t *testing.T) {
	f, outside := chainFixture(t)
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../f", f.abs("d1/d2/out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/out", f.abs("via")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a/out", "via"} {
		for _, c := range []struct {
			tl   tool.Tool
			args any
		}{
			{Read(), map[string]any{"path": p}},
			{Write(), writeArgs{p, "pwned\n"}},
			{Edit(), editArgs{Path: p, OldString: "secret", NewString: "pwned"}},
			{Edit(), editArgs{Path: p, NewString: "pwned"}},
		} {
			if msg := f.fail(c.tl, c.args); !strings.Contains(msg, "outside the workspace") || strings.Contains(msg, "secret\n") {
				t.Errorf("%s %s: %q", c.tl.Name(), p, msg)
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret\n" {
		t.Fatalf("the outside file holds %q", b)
	}
}
