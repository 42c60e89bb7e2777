package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// preview runs a call's preview, which must succeed, and returns the arguments
// and the logged preview.
func (f *editFixture) preview(tl tool.Tool, args any) ([]byte, jsontext.Value) {
	f.t.Helper()
	raw, err := json.Marshal(args, json.Deterministic(true))
	if err != nil {
		f.t.Fatal(err)
	}
	pv, refused := tl.Preview(context.Background(), tool.Env{Session: f.sess}, raw)
	if refused != nil {
		f.t.Fatalf("%s %s: preview refused: %s", tl.Name(), raw, refused.TextOf())
	}
	if pv == nil {
		f.t.Fatalf("%s %s: no preview", tl.Name(), raw)
	}
	return raw, pv
}

// previewGolden compares the call card of a previewed call with
// testdata/cards/NAME.json; -update rewrites it.
func previewGolden(t *testing.T, name string, tl tool.Tool, args []byte, pv jsontext.Value) card.Call {
	t.Helper()
	call := tl.PresentCall(args, pv)
	callJSON, err := json.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := card.DecodeCall(callJSON); err != nil {
		t.Fatalf("call card does not decode: %v", err)
	}
	v := jsontext.Value(callJSON)
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		t.Fatal(err)
	}
	got := append(v, '\n')
	path := filepath.Join("testdata", "cards", name+".json")
	if *update {
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
	return call
}

// runPreviewed executes a call with the preview it was approved with.
func (f *editFixture) runPreviewed(tl tool.Tool, args []byte, pv jsontext.Value) tool.Result {
	f.t.Helper()
	r := logged(f.t, res(tl.Run(context.Background(), tool.Env{Session: f.sess}, args, pv)))
	tl.Fold(f.sess, args, r)
	return r
}

// The preview shows the change as it will be applied, and is exactly what runs:
// the result's hunks are the preview's.
func TestPreviewGoldens(t *testing.T) {
	f := newEditFixture(t)
	old := diffNumbered(1, 40)
	f.put("notes.txt", old, 0o644)
	f.put("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n", 0o644)
	var calc strings.Builder
	for i := 1; i <= 40; i++ {
		if i == 2 || i == 4 || i == 30 {
			calc.WriteString("total := count + count\n")
		} else {
			calc.WriteString("line\n")
		}
	}
	f.put("calc.go", calc.String(), 0o644)
	for _, p := range []string{"notes.txt", "main.go", "calc.go"} {
		f.read(p)
	}
	overwrite := strings.Replace(old, "line 3\n", "line three\n", 1)
	for _, c := range []struct {
		golden string
		tl     tool.Tool
		args   any
		title  string
		diffs  int
	}{
		{"preview_write_overwrite", Write(), writeArgs{"notes.txt", overwrite}, "Write notes.txt", 1},
		{"preview_edit", Edit(), editArgs{Path: "main.go", OldString: "\tfmt.Println(\"hello\")\n", NewString: "\tfmt.Println(\"hello, world\")\n"}, "Edit main.go", 1},
		{"preview_edit_replace_all", Edit(), editArgs{Path: "calc.go", OldString: "count + count", NewString: "2 * count", ReplaceAll: true}, "Edit calc.go", 2},
		{"preview_write_create", Write(), writeArgs{"src/new.go", "package src\n"}, "Create src/new.go", 1},
	} {
		args, pv := f.preview(c.tl, c.args)
		call, ok := previewGolden(t, c.golden, c.tl, args, pv).(*card.DiffCall)
		if !ok || call.Title != c.title || len(call.Diffs) != c.diffs {
			t.Fatalf("%s: call card %#v", c.golden, call)
		}
		if c.golden != "preview_write_create" && (call.Diffs[0].OldText == nil || call.Diffs[0].OldStart < 1) {
			t.Fatalf("%s: an existing file's change shows no old text or line: %#v", c.golden, call.Diffs[0])
		}
		r := f.runPreviewed(c.tl, args, pv)
		if r.IsError {
			t.Fatalf("%s: %s", c.golden, r.TextOf())
		}
		rc, ok := c.tl.PresentResult(args, r).(*card.DiffResult)
		if !ok {
			t.Fatalf("%s: no result card", c.golden)
		}
		cj, _ := json.Marshal(call.Diffs)
		rj, _ := json.Marshal(rc.Diffs)
		if string(cj) != string(rj) {
			t.Fatalf("%s: applied %s, previewed %s", c.golden, rj, cj)
		}
	}
	if f.get("notes.txt") != overwrite {
		t.Fatal("overwrite not applied")
	}
}

// If the file changes between the preview (what the user approved) and the
// execution, nothing is written: the change is not applied to the new content.
func TestPreviewRefusesAChangedFile(t *testing.T) {
	for _, c := range []struct {
		name   string
		tl     tool.Tool
		args   any
		before string // "" : the file does not exist when previewed
		after  string
	}{
		{"write", Write(), writeArgs{"a.txt", "mine\n"}, "one two\n", "one TWO\n"},
		{"edit", Edit(), editArgs{Path: "a.txt", OldString: "one", NewString: "1"}, "one two\n", "one two three\n"},
		{"create", Write(), writeArgs{"a.txt", "mine\n"}, "", "theirs\n"},
		{"edit create", Edit(), editArgs{Path: "a.txt", NewString: "mine\n"}, "", "theirs\n"},
	} {
		f := newEditFixture(t)
		if c.before != "" {
			f.put("a.txt", c.before, 0o644)
			f.read("a.txt")
		}
		args, pv := f.preview(c.tl, c.args)
		f.put("a.txt", c.after, 0o644)
		r := f.runPreviewed(c.tl, args, pv)
		if !r.IsError || !strings.Contains(r.TextOf(), "after the change was previewed") {
			t.Errorf("%s: %s", c.name, r.TextOf())
		}
		if f.get("a.txt") != c.after {
			t.Errorf("%s: the file holds %q", c.name, f.get("a.txt"))
		}
	}
}

// A call that cannot succeed says so from its preview, before anyone is asked.
func TestPreviewRefusesWhatCannotSucceed(t *testing.T) {
	f := newEditFixture(t)
	f.put("unread.txt", "x\n", 0o644)
	f.put("read.txt", "alpha\n", 0o644)
	f.read("read.txt")
	f.put("stale.txt", "s\n", 0o644)
	f.read("stale.txt")
	f.put("stale.txt", "S!\n", 0o644)
	for _, c := range []struct {
		name string
		tl   tool.Tool
		args any
		want string
	}{
		{"edit of an unread file", Edit(), editArgs{Path: "unread.txt", OldString: "x", NewString: "y"}, "has not been read"},
		{"overwrite of an unread file", Write(), writeArgs{"unread.txt", "y\n"}, "has not been read"},
		{"no match", Edit(), editArgs{Path: "read.txt", OldString: "beta", NewString: "y"}, "not found"},
		{"stale", Edit(), editArgs{Path: "stale.txt", OldString: "S", NewString: "y"}, "changed on disk"},
		{"missing file", Edit(), editArgs{Path: "nope.txt", OldString: "a", NewString: "b"}, "does not exist"},
		{"outside", Write(), writeArgs{"../x", "y"}, "outside the workspace"},
	} {
		raw, _ := json.Marshal(c.args)
		pv, refused := c.tl.Preview(context.Background(), tool.Env{Session: f.sess}, raw)
		if refused == nil || !refused.IsError || pv != nil || !strings.Contains(refused.TextOf(), c.want) {
			t.Errorf("%s: preview %s, refusal %+v", c.name, pv, refused)
		}
	}
}

// Without a preview that decodes, the call does not run (the framework's rule),
// and a call card without one is the seed's.
func TestNoPreviewNoRun(t *testing.T) {
	f := newEditFixture(t)
	f.put("a.txt", "alpha\n", 0o644)
	f.read("a.txt")
	args, _ := json.Marshal(editArgs{Path: "a.txt", OldString: "alpha", NewString: "beta"})
	for _, pv := range []jsontext.Value{nil, jsontext.Value(`{"path":"a.txt"}`)} {
		if r := f.runPreviewed(Edit(), args, pv); !r.IsError {
			t.Fatalf("ran with preview %s", pv)
		}
	}
	if f.get("a.txt") != "alpha\n" {
		t.Fatal("the file changed")
	}
}
