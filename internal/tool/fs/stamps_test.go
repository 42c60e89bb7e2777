package fs

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/tool"
)

// loggedCall is a call as the session log keeps it.
type loggedCall struct {
	tl   tool.Tool
	args []byte
	r    tool.Result
}

// reload folds logged results into a fresh session on the same workspace, as the
// session host does when a session is loaded.
func reload(f *editFixture, log []loggedCall) {
	f.t.Helper()
	fresh := tool.NewSession("reloaded", f.sess.Workspace)
	f.t.Cleanup(func() { _ = fresh.Close() })
	for _, c := range log {
		c.tl.Fold(fresh, c.args, c.r)
	}
	f.sess = fresh
}

func (f *editFixture) logged(tl tool.Tool, args any) loggedCall {
	f.t.Helper()
	raw, r := f.call(tl, args)
	if r.IsError {
		f.t.Fatalf("%s %s: %s", tl.Name(), raw, r.TextOf())
	}
	return loggedCall{tl, raw, r}
}

func TestStampsSurviveAReload(t *testing.T) {
	f := newEditFixture(t)
	f.put("a.txt", "alpha\n", 0o644)
	f.put("b.txt", "beta\n", 0o644)
	log := []loggedCall{
		f.logged(Read(), map[string]any{"path": "a.txt"}),
		f.logged(Write(), writeArgs{"c.txt", "gamma\n"}),
	}
	// Without the log, a fresh session knows nothing.
	reload(f, nil)
	if msg := f.fail(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "ALPHA"}); !strings.Contains(msg, "has not been read") {
		t.Fatalf("fresh session: %q", msg)
	}
	// With it, the file read and the file written before the reload are known,
	// and a file never read is still refused.
	reload(f, log)
	log = append(log, f.logged(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "ALPHA"}))
	f.ok(Write(), writeArgs{"c.txt", "GAMMA\n"})
	if msg := f.fail(Edit(), editArgs{Path: "b.txt", OldString: "beta", NewString: "BETA"}); !strings.Contains(msg, "has not been read") {
		t.Fatalf("unread file after reload: %q", msg)
	}
	// The edit's own stamp is folded too: a second reload may edit again.
	reload(f, log)
	f.ok(Edit(), editArgs{Path: "a.txt", OldString: "ALPHA", NewString: "omega"})
	if f.get("a.txt") != "omega\n" || f.get("c.txt") != "GAMMA\n" {
		t.Fatalf("files hold %q, %q", f.get("a.txt"), f.get("c.txt"))
	}
}

// A change behind the session's back that keeps the size and sets the
// modification time back is caught by the content hash, live and after a reload.
func TestStaleSameSizeChangeWithMTimeRestored(t *testing.T) {
	for _, reloaded := range []bool{false, true} {
		f := newEditFixture(t)
		f.put("a.txt", "alpha\n", 0o644)
		past := time.Now().Add(-time.Hour).Truncate(time.Second)
		if err := os.Chtimes(f.abs("a.txt"), past, past); err != nil {
			t.Fatal(err)
		}
		log := []loggedCall{f.logged(Read(), map[string]any{"path": "a.txt"})}
		f.put("a.txt", "ALPHA\n", 0o644)
		if err := os.Chtimes(f.abs("a.txt"), past, past); err != nil {
			t.Fatal(err)
		}
		if reloaded {
			reload(f, log)
		}
		for _, c := range []struct {
			tl   tool.Tool
			args any
		}{
			{Edit(), editArgs{Path: "a.txt", OldString: "ALPHA", NewString: "beta"}},
			{Write(), writeArgs{"a.txt", "gamma\n"}},
		} {
			if msg := f.fail(c.tl, c.args); !strings.Contains(msg, "changed on disk") {
				t.Fatalf("reloaded=%v %s: %q", reloaded, c.tl.Name(), msg)
			}
		}
		if f.get("a.txt") != "ALPHA\n" {
			t.Fatalf("reloaded=%v: the file was overwritten: %q", reloaded, f.get("a.txt"))
		}
	}
}

// A touch changes no content: the file stays editable.
func TestStampIgnoresATouch(t *testing.T) {
	f := newEditFixture(t)
	f.put("a.txt", "alpha\n", 0o644)
	f.read("a.txt")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.abs("a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	f.ok(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "beta"})
}

// Past the hash bound only a prefix is hashed, so the times must agree too.
func TestStampSameBeyondTheHashBound(t *testing.T) {
	base := fileStamp{Path: "/w/a", Size: stampHashBytes + 1, MTime: 5, CTime: 6, SHA256: strings.Repeat("a", 64)}
	for _, c := range []struct {
		name string
		edit func(*fileStamp)
		same bool
	}{
		{"identical", func(*fileStamp) {}, true},
		{"mtime differs", func(s *fileStamp) { s.MTime++ }, false},
		{"ctime differs", func(s *fileStamp) { s.CTime++ }, false},
		{"size differs", func(s *fileStamp) { s.Size++ }, false},
		{"hash differs", func(s *fileStamp) { s.SHA256 = strings.Repeat("b", 64) }, false},
		{"another file", func(s *fileStamp) { s.Path = "/w/b" }, false},
		{"small file, times differ", func(s *fileStamp) { s.MTime++; s.CTime++; s.Size = 10 }, true},
	} {
		a, b := base, base
		c.edit(&b)
		if c.name == "small file, times differ" {
			a.Size = 10
		}
		if got := a.same(&b); got != c.same {
			t.Errorf("%s: same = %v", c.name, got)
		}
	}
}
