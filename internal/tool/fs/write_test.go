package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// editFixture is a session on a fresh temporary workspace, shared by the write
// and edit tests.
type editFixture struct {
	t    *testing.T
	root string
	sess *tool.Session
}

func newEditFixture(t *testing.T) *editFixture {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	sess := tool.NewSession("test", ws)
	t.Cleanup(func() { _ = sess.Close() })
	return &editFixture{t: t, root: ws.Root(), sess: sess}
}

func (f *editFixture) abs(rel string) string { return filepath.Join(f.root, rel) }

// put writes a file behind the session's back.
func (f *editFixture) put(rel, content string, mode os.FileMode) {
	f.t.Helper()
	p := f.abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		f.t.Fatal(err)
	}
}

func (f *editFixture) get(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(f.abs(rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// read runs the real read tool, whose folded result records what the session saw.
func (f *editFixture) read(rel string) {
	f.t.Helper()
	if _, r := f.call(Read(), map[string]any{"path": rel}); r.IsError {
		f.t.Fatalf("read %s: %s", rel, r.TextOf())
	}
}

// call runs a tool through its erased interface, as the agent and the session
// host do: the preview, then (unless the preview refused) the call with it, then
// the fold of the logged result. It returns the arguments and the result as a
// session log would persist and replay them.
func (f *editFixture) call(tl tool.Tool, args any) ([]byte, tool.Result) {
	f.t.Helper()
	raw, _, r := runCall(f.t, f.sess, tl, args)
	return raw, r
}

// runCall is one call as the agent makes it: it returns the arguments, the logged
// preview and the logged result, already folded into sess.
func runCall(t testing.TB, sess *tool.Session, tl tool.Tool, args any) ([]byte, jsontext.Value, tool.Result) {
	t.Helper()
	raw, err := json.Marshal(args, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	env := tool.Env{Session: sess}
	pv, refused := tl.Preview(context.Background(), env, raw)
	var r tool.Result
	if refused != nil {
		r = *refused
	} else {
		r = res(tl.Run(context.Background(), env, raw, pv))
	}
	r = logged(t, r)
	tl.Fold(sess, raw, r)
	return raw, pv, r
}

// logged returns v as the log gives it back: encoded and decoded.
func logged[T any](t testing.TB, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// ok runs a call that must succeed.
func (f *editFixture) ok(tl tool.Tool, args any) ([]byte, tool.Result) {
	f.t.Helper()
	raw, r := f.call(tl, args)
	if r.IsError {
		f.t.Fatalf("%s %s: unexpected error: %s", tl.Name(), raw, r.TextOf())
	}
	return raw, r
}

// fail runs a call that must fail and returns its message; an error result
// carries no meta and presents as nil.
func (f *editFixture) fail(tl tool.Tool, args any) string {
	f.t.Helper()
	raw, r := f.call(tl, args)
	if !r.IsError {
		f.t.Fatalf("%s %s: want an error, got %s", tl.Name(), raw, r.TextOf())
	}
	if r.Meta != nil {
		f.t.Fatalf("error result carries meta %s", r.Meta)
	}
	if c := tl.PresentResult(raw, r); c != nil {
		f.t.Fatalf("error result presents as %#v", c)
	}
	return r.TextOf()
}

// editGolden compares the call and result cards of a call (and the model-facing
// text) with testdata/cards/NAME.json; -update rewrites it. The cards must also
// survive the strict codec.
func editGolden(t *testing.T, name string, tl tool.Tool, args []byte, r tool.Result) {
	t.Helper()
	call := tl.PresentCall(args, nil)
	res := tl.PresentResult(args, r)
	if res == nil {
		t.Fatalf("%s: no result card for %s", name, r.Meta)
	}
	callJSON, err := json.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	resJSON, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := card.DecodeCall(callJSON); err != nil {
		t.Fatalf("call card does not decode: %v", err)
	}
	if _, err := card.DecodeResult(resJSON); err != nil {
		t.Fatalf("result card does not decode: %v", err)
	}
	doc, err := json.Marshal(map[string]any{
		"call": jsontext.Value(callJSON), "result": jsontext.Value(resJSON), "content": r.TextOf(),
	}, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	v := jsontext.Value(doc)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatal(err)
	}
	got := append(v, '\n')
	path := filepath.Join("testdata", "cards", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the golden file:\n%s\nwant\n%s", name, got, want)
	}
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func TestWriteGoldenCreate(t *testing.T) {
	f := newEditFixture(t)
	args, r := f.ok(Write(), writeArgs{"src/hello.go", "package hello\n\nfunc Hello() string { return \"hi\" }\n"})
	if got := f.get("src/hello.go"); got != "package hello\n\nfunc Hello() string { return \"hi\" }\n" {
		t.Fatalf("file holds %q", got)
	}
	editGolden(t, "write_create", Write(), args, r)
}

func TestWriteGoldenOverwrite(t *testing.T) {
	f := newEditFixture(t)
	old := diffNumbered(1, 40)
	f.put("notes.txt", old, 0o644)
	f.read("notes.txt")
	new := strings.Replace(old, "line 3\n", "line three\n", 1)
	new = strings.Replace(new, "line 30\n", "line 30\nline 30.5\n", 1)
	args, r := f.ok(Write(), writeArgs{"notes.txt", new})
	if f.get("notes.txt") != new {
		t.Fatal("file not overwritten")
	}
	editGolden(t, "write_overwrite", Write(), args, r)
	m := editMeta(t, "notes.txt", r.Meta)
	if m.Created || len(m.Hunks) != 2 {
		t.Fatalf("meta %s", r.Meta)
	}
	if got, err := hunkApply(old, m.Hunks); err != nil || got != new {
		t.Fatalf("persisted hunks do not apply: %v", err)
	}
}

func TestWriteIdenticalContentSaysNoChange(t *testing.T) {
	f := newEditFixture(t)
	f.put("same.txt", "x\n", 0o644)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(f.abs("same.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	f.read("same.txt")
	args, r := f.ok(Write(), writeArgs{"same.txt", "x\n"})
	if r.TextOf() != "No changes: same.txt already has this content." {
		t.Fatalf("text %q", r.TextOf())
	}
	c, ok := Write().PresentResult(args, r).(*card.GenericResult)
	if !ok || c.Title != "No changes: same.txt" || len(c.Content) != 1 || c.Content[0].Text != r.TextOf() {
		t.Fatalf("card %#v", Write().PresentResult(args, r))
	}
	fi, err := os.Stat(f.abs("same.txt"))
	if err != nil || !fi.ModTime().Equal(past) {
		t.Fatalf("identical write touched the file: %v %v", fi.ModTime(), err)
	}
}

func TestWriteCreatesParentsAndNeedsNoRead(t *testing.T) {
	f := newEditFixture(t)
	f.ok(Write(), writeArgs{"a/b/c/new.txt", "hi"})
	if f.get("a/b/c/new.txt") != "hi" {
		t.Fatal("not created")
	}
	// A file the session created is known to it: it may overwrite it at once.
	f.ok(Write(), writeArgs{"a/b/c/new.txt", "again"})
	if f.get("a/b/c/new.txt") != "again" {
		t.Fatal("not overwritten")
	}
}

func TestWriteNeverClobbers(t *testing.T) {
	f := newEditFixture(t)
	f.put("user.txt", "mine\n", 0o644)
	msg := f.fail(Write(), writeArgs{"user.txt", "yours\n"})
	if !strings.Contains(msg, "has not been read") || !strings.Contains(msg, "user.txt") {
		t.Fatalf("message %q", msg)
	}
	f.read("user.txt")
	// Someone changes the file after the read.
	f.put("user.txt", "mine, edited\n", 0o644)
	msg = f.fail(Write(), writeArgs{"user.txt", "yours\n"})
	if !strings.Contains(msg, "changed on disk") || !strings.Contains(msg, "Read it again") {
		t.Fatalf("message %q", msg)
	}
	if f.get("user.txt") != "mine, edited\n" {
		t.Fatal("a refused write changed the file")
	}
	f.read("user.txt")
	f.ok(Write(), writeArgs{"user.txt", "yours\n"})
	if f.get("user.txt") != "yours\n" {
		t.Fatal("write after read did not land")
	}
}

func TestWriteStampsBelongToTheSession(t *testing.T) {
	f := newEditFixture(t)
	f.put("shared.txt", "a\n", 0o644)
	f.read("shared.txt")
	other := tool.NewSession("other", f.sess.Workspace)
	defer other.Close()
	if _, _, r := runCall(t, other, Write(), writeArgs{"shared.txt", "b\n"}); !r.IsError {
		t.Fatal("another session overwrote a file it never read")
	}
}

func TestWriteKeepsMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o600, 0o640, 0o755, 0o444} {
		f := newEditFixture(t)
		f.put("m", "old\n", mode)
		f.read("m")
		f.ok(Write(), writeArgs{"m", "new\n"})
		fi, err := os.Stat(f.abs("m"))
		if err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("mode %v after write, want %v (%v)", fi.Mode().Perm(), mode, err)
		}
	}
}

func TestWriteNewFileGetsUmaskMode(t *testing.T) {
	f := newEditFixture(t)
	// What a plain create gets here, whatever the umask is.
	ref := f.abs("ref")
	fh, err := os.OpenFile(ref, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	_ = fh.Close()
	want, _ := os.Stat(ref)
	f.ok(Write(), writeArgs{"fresh", "x"})
	got, err := os.Stat(f.abs("fresh"))
	if err != nil || got.Mode() != want.Mode() {
		t.Fatalf("new file mode %v, want %v", got.Mode(), want.Mode())
	}
}

func TestWriteThroughSymlink(t *testing.T) {
	f := newEditFixture(t)
	f.put("real/target.txt", "old\n", 0o640)
	if err := os.Symlink("real/target.txt", f.abs("link.txt")); err != nil {
		t.Fatal(err)
	}
	f.read("link.txt")
	f.ok(Write(), writeArgs{"link.txt", "new\n"})
	fi, err := os.Lstat(f.abs("link.txt"))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if f.get("real/target.txt") != "new\n" {
		t.Fatal("the target was not written")
	}
	if fi, _ := os.Stat(f.abs("real/target.txt")); fi.Mode().Perm() != 0o640 {
		t.Fatalf("target mode %v", fi.Mode().Perm())
	}
	// A dangling link: the write creates its target.
	if err := os.Symlink("real/later.txt", f.abs("dangling")); err != nil {
		t.Fatal(err)
	}
	f.ok(Write(), writeArgs{"dangling", "born\n"})
	if f.get("real/later.txt") != "born\n" {
		t.Fatal("dangling link target not created")
	}
	if fi, err := os.Lstat(f.abs("dangling")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("dangling link replaced")
	}
}

func TestWriteLeavesNoTemporaryFiles(t *testing.T) {
	f := newEditFixture(t)
	f.put("d/x", "1\n", 0o644)
	f.read("d/x")
	f.ok(Write(), writeArgs{"d/x", "2\n"})
	f.ok(Write(), writeArgs{"d/y", "3\n"})
	entries, err := os.ReadDir(f.abs("d"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "x y" {
		t.Fatalf("directory holds %v", names)
	}
}

func TestWriteRefusals(t *testing.T) {
	f := newEditFixture(t)
	if err := os.Mkdir(f.abs("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args writeArgs
		want string
	}{
		{writeArgs{"dir", "x"}, "directory"},
		{writeArgs{"../outside.txt", "x"}, "outside the workspace"},
		{writeArgs{"", "x"}, "empty path"},
	} {
		if msg := f.fail(Write(), c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%+v: message %q, want %q", c.args, msg, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.root), "outside.txt")); err == nil {
		t.Fatal("wrote outside the workspace")
	}
	if msg := f.fail(Write(), map[string]any{"path": "a"}); !strings.Contains(msg, "content") {
		t.Fatalf("missing content: %q", msg)
	}
}

func TestWriteToolDeclaration(t *testing.T) {
	for _, tl := range []tool.Tool{Write(), Edit()} {
		if tl.ReadOnly() || tl.Permission() != tool.PermEdit || tl.Kind() != "edit" || tl.Description() == "" {
			t.Errorf("%s: readOnly %v permission %v kind %q", tl.Name(), tl.ReadOnly(), tl.Permission(), tl.Kind())
		}
	}
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(Edit().Schema(), &s, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Required, ",") != "path,old_string,new_string" {
		t.Fatalf("edit requires %v", s.Required)
	}
}
