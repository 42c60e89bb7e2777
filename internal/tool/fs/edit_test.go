package fs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitzero"`
}

// editMeta narrows a successful result's meta or fails the test.
func editMeta(t *testing.T, path string, raw []byte) diffMeta {
	t.Helper()
	m := tool.DecodeMeta[diffMeta](raw)
	if m == nil || m.Path != path {
		t.Fatalf("meta does not decode for %s: %s", path, raw)
	}
	return *m
}

func TestEditGoldenEdit(t *testing.T) {
	f := newEditFixture(t)
	old := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"
	f.put("main.go", old, 0o644)
	f.read("main.go")
	args, r := f.ok(Edit(), editArgs{Path: "main.go", OldString: "\tfmt.Println(\"hello\")\n", NewString: "\tfmt.Println(\"hello, world\")\n\tfmt.Println(\"bye\")\n"})
	want := strings.Replace(old, "\"hello\")\n", "\"hello, world\")\n\tfmt.Println(\"bye\")\n", 1)
	if f.get("main.go") != want {
		t.Fatalf("file holds %q", f.get("main.go"))
	}
	editGolden(t, "edit", Edit(), args, r)
	if got, err := hunkApply(old, editMeta(t, "main.go", r.Meta).Hunks); err != nil || got != want {
		t.Fatalf("hunks: %v", err)
	}
}

func TestEditGoldenReplaceAll(t *testing.T) {
	f := newEditFixture(t)
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		switch i {
		case 2, 4, 30: // 2 and 4 share a hunk; 30 has its own
			b.WriteString("total := count + count\n")
		default:
			b.WriteString("line " + strings.Repeat("·", i%3) + "\n")
		}
	}
	old := b.String()
	f.put("calc.go", old, 0o644)
	f.read("calc.go")
	args, r := f.ok(Edit(), editArgs{Path: "calc.go", OldString: "count", NewString: "n", ReplaceAll: true})
	want := strings.ReplaceAll(old, "count", "n")
	if f.get("calc.go") != want {
		t.Fatal("not every site replaced")
	}
	m := editMeta(t, "calc.go", r.Meta)
	if m.Sites != 6 || len(m.Hunks) != 2 || m.Omitted != 0 {
		t.Fatalf("sites %d hunks %d omitted %d", m.Sites, len(m.Hunks), m.Omitted)
	}
	if got, err := hunkApply(old, m.Hunks); err != nil || got != want {
		t.Fatalf("hunks: %v", err)
	}
	editGolden(t, "edit_replace_all", Edit(), args, r)
}

func TestEditGoldenCRLF(t *testing.T) {
	f := newEditFixture(t)
	old := "\xEF\xBB\xBFfirst\r\nsecond\r\nthird\r\n"
	f.put("win.txt", old, 0o644)
	f.read("win.txt")
	// The model writes LF; the file keeps CRLF and its BOM.
	args, r := f.ok(Edit(), editArgs{Path: "win.txt", OldString: "first\nsecond\n", NewString: "first\nmiddle\nsecond\n"})
	if got := f.get("win.txt"); got != "\xEF\xBB\xBFfirst\r\nmiddle\r\nsecond\r\nthird\r\n" {
		t.Fatalf("file holds %q", got)
	}
	editGolden(t, "edit_crlf", Edit(), args, r)
}

func TestEditGoldenNoFinalNewline(t *testing.T) {
	f := newEditFixture(t)
	f.put("tail.txt", "one\ntwo\nthree", 0o644)
	f.read("tail.txt")
	args, r := f.ok(Edit(), editArgs{Path: "tail.txt", OldString: "three", NewString: "3"})
	if got := f.get("tail.txt"); got != "one\ntwo\n3" {
		t.Fatalf("file holds %q", got)
	}
	editGolden(t, "edit_no_final_newline", Edit(), args, r)
}

func TestEditCreatesMissingFileWithEmptyOldString(t *testing.T) {
	f := newEditFixture(t)
	args, r := f.ok(Edit(), editArgs{Path: "new/file.txt", NewString: "hello\n"})
	if f.get("new/file.txt") != "hello\n" {
		t.Fatal("not created")
	}
	c, ok := Edit().PresentResult(args, r).(*card.DiffResult)
	if !ok || len(c.Diffs) != 1 || c.Diffs[0].OldText != nil || c.Diffs[0].NewText != "hello\n" || c.Diffs[0].NewStart != 1 {
		t.Fatalf("card %#v", Edit().PresentResult(args, r))
	}
	call, ok := Edit().PresentCall(args, nil).(*card.DiffCall)
	if !ok || call.Diffs[0].OldText != nil {
		t.Fatalf("call card %#v", Edit().PresentCall(args, nil))
	}
}

func TestEditFillsEmptyFile(t *testing.T) {
	f := newEditFixture(t)
	f.put("empty.txt", "", 0o600)
	f.read("empty.txt")
	args, r := f.ok(Edit(), editArgs{Path: "empty.txt", NewString: "now\nfull\n"})
	if f.get("empty.txt") != "now\nfull\n" {
		t.Fatal("not filled")
	}
	c, ok := Edit().PresentResult(args, r).(*card.DiffResult)
	if !ok || len(c.Diffs) != 1 || c.Diffs[0].OldText == nil || *c.Diffs[0].OldText != "" || c.Diffs[0].NewText != "now\nfull\n" {
		t.Fatalf("card %#v", Edit().PresentResult(args, r))
	}
	if fi, _ := os.Stat(f.abs("empty.txt")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestEditPreservesModeAndFollowsSymlink(t *testing.T) {
	f := newEditFixture(t)
	f.put("bin/run.sh", "#!/bin/sh\necho old\n", 0o755)
	if err := os.Symlink("bin/run.sh", f.abs("run")); err != nil {
		t.Fatal(err)
	}
	f.read("run")
	f.ok(Edit(), editArgs{Path: "run", OldString: "old", NewString: "new"})
	if f.get("bin/run.sh") != "#!/bin/sh\necho new\n" {
		t.Fatal("target not edited")
	}
	if fi, err := os.Lstat(f.abs("run")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("link replaced")
	}
	if fi, _ := os.Stat(f.abs("bin/run.sh")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
}

func TestEditNeverClobbers(t *testing.T) {
	f := newEditFixture(t)
	f.put("a.txt", "alpha\n", 0o644)
	if msg := f.fail(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "beta"}); !strings.Contains(msg, "has not been read") {
		t.Fatalf("unread: %q", msg)
	}
	f.read("a.txt")
	f.put("a.txt", "alpha, changed by the user\n", 0o644)
	if msg := f.fail(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "beta"}); !strings.Contains(msg, "changed on disk") {
		t.Fatalf("changed: %q", msg)
	}
	if f.get("a.txt") != "alpha, changed by the user\n" {
		t.Fatal("refused edit changed the file")
	}
	f.read("a.txt")
	f.ok(Edit(), editArgs{Path: "a.txt", OldString: "alpha", NewString: "beta"})
	// The session's own edit is recorded: a second edit needs no new read.
	f.ok(Edit(), editArgs{Path: "a.txt", OldString: "beta", NewString: "gamma"})
	if f.get("a.txt") != "gamma, changed by the user\n" {
		t.Fatalf("file holds %q", f.get("a.txt"))
	}
}

func TestEditRefusals(t *testing.T) {
	f := newEditFixture(t)
	body := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	f.put("x.go", body, 0o644)
	f.read("x.go")
	if err := os.Mkdir(f.abs("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args editArgs
		want []string
	}{
		{"identical", editArgs{Path: "x.go", OldString: "a", NewString: "a"}, []string{"identical"}},
		{"several matches", editArgs{Path: "x.go", OldString: "\treturn 1\n", NewString: "\treturn 2\n"},
			[]string{"matches 2 times", "lines 2, 6", "replace_all"}},
		{"empty old on non-empty file", editArgs{Path: "x.go", NewString: "x"}, []string{"old_string is empty", "x.go is not"}},
		{"missing file", editArgs{Path: "nope.go", OldString: "a", NewString: "b"}, []string{"does not exist", "write"}},
		{"directory", editArgs{Path: "dir", OldString: "a", NewString: "b"}, []string{"directory"}},
		{"outside", editArgs{Path: "../x", OldString: "a", NewString: "b"}, []string{"outside the workspace"}},
		{"whitespace differs", editArgs{Path: "x.go", OldString: "func b() {\n    return 1\n}", NewString: "func b() {}"},
			[]string{"not found", "lines 5-7", "differs only in whitespace", "5: func b() {\n6: \treturn 1\n7: }\n"}},
		{"one line differs", editArgs{Path: "x.go", OldString: "func a() {\n\treturn 7\n}\n", NewString: "x"},
			[]string{"lines 1-3", "has 2 of its 3 lines equal ignoring whitespace", "2: \treturn 1"}},
		{"nothing similar", editArgs{Path: "x.go", OldString: "zebra crossing", NewString: "x"}, []string{"no similar lines"}},
	}
	for _, c := range cases {
		msg := f.fail(Edit(), c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", c.name, msg, w)
			}
		}
	}
	if f.get("x.go") != body {
		t.Fatal("a refused edit changed the file")
	}
}

func TestEditOverlappingMatchIsAmbiguous(t *testing.T) {
	f := newEditFixture(t)
	f.put("a", "aaa\n", 0o644)
	f.read("a")
	if msg := f.fail(Edit(), editArgs{Path: "a", OldString: "aa", NewString: "b"}); !strings.Contains(msg, "matches 2 times") || !strings.Contains(msg, "line 1") {
		t.Fatalf("message %q", msg)
	}
	// replace_all takes non-overlapping matches left to right, like strings.ReplaceAll.
	f.ok(Edit(), editArgs{Path: "a", OldString: "aa", NewString: "b", ReplaceAll: true})
	if f.get("a") != "ba\n" {
		t.Fatalf("file holds %q", f.get("a"))
	}
}

func TestEditCRLFOnlyDifferenceIsRefused(t *testing.T) {
	f := newEditFixture(t)
	f.put("w", "a\r\nb\r\n", 0o644)
	f.read("w")
	if msg := f.fail(Edit(), editArgs{Path: "w", OldString: "a\n", NewString: "a\r\n"}); !strings.Contains(msg, "line endings") {
		t.Fatalf("message %q", msg)
	}
}

// Many sites beyond the hunk budget: every site is replaced, the meta is capped
// and the card says how many sites it does not show.
func TestEditHunkBudgetCapsMeta(t *testing.T) {
	f := newEditFixture(t)
	old := strings.Repeat("x = 1\n\n\n\n\n\n\n\n", hunkMaxHunks+20)
	f.put("many", old, 0o644)
	f.read("many")
	args, r := f.ok(Edit(), editArgs{Path: "many", OldString: "x", NewString: "y", ReplaceAll: true})
	if f.get("many") != strings.ReplaceAll(old, "x", "y") {
		t.Fatal("not every site replaced")
	}
	m := editMeta(t, "many", r.Meta)
	if m.Sites != hunkMaxHunks+20 || len(m.Hunks) != hunkMaxHunks || m.Omitted != 20 {
		t.Fatalf("sites %d hunks %d omitted %d", m.Sites, len(m.Hunks), m.Omitted)
	}
	c := Edit().PresentResult(args, r).(*card.DiffResult)
	if c.Title != "Edit many (20 more sites not shown)" || len(c.Diffs) != hunkMaxHunks || len(c.Locations) != hunkMaxHunks {
		t.Fatalf("title %q, %d diffs", c.Title, len(c.Diffs))
	}
	// The second site is on line 9; its hunk starts diffContext lines earlier.
	if *c.Locations[1].Line != 6 || c.Diffs[1].OldStart != 6 || c.Diffs[1].NewStart != 6 {
		t.Fatalf("second hunk at %d/%d", c.Diffs[1].OldStart, *c.Locations[1].Line)
	}
}

// A site that is one enormous line is replaced, but its hunk exceeds the byte
// budget, so none is persisted.
func TestEditHugeLineIsNotPersisted(t *testing.T) {
	var out bytes.Buffer
	text := []byte(strings.Repeat("ab", hunkMaxBytes))
	res, err := editReplace(&out, text, []byte("b"), []byte("c"), 1, true, newHunkBudget())
	if err != nil {
		t.Fatal(err)
	}
	if res.sites != hunkMaxBytes || len(res.hunks) != 0 || res.omitted != hunkMaxBytes {
		t.Fatalf("sites %d hunks %d omitted %d", res.sites, len(res.hunks), res.omitted)
	}
	if out.String() != strings.Repeat("ac", hunkMaxBytes) {
		t.Fatal("wrong output")
	}
}

// Property: for random texts and replacements, editReplace writes what
// strings.Replace would, and its hunks turn the old text into the new one.
func TestEditHunksApplyToOldYieldNew(t *testing.T) {
	r := newEditRand(11)
	for i := range 3000 {
		text := diffRandomText(r, r.IntN(40), r.IntN(5) == 0)
		olds := []string{"a", "b\n", "\n", "}\n\n", "c\nc", "x :=", "\n\n\n"}
		news := []string{"", "Z", "y\n", "\n\n", "q\nr\ns"}
		old, repl := olds[r.IntN(len(olds))], news[r.IntN(len(news))]
		all := r.IntN(2) == 0
		editCheckReplace(t, i, text, old, repl, all)
	}
}

// editCheckReplace runs the matcher and replacement on text and checks every
// invariant the tool relies on.
func editCheckReplace(t *testing.T, i int, text, old, repl string, all bool) {
	t.Helper()
	first, err := editLocate([]byte(text), []byte(old), all)
	if err != nil {
		if editIsNotFound(err) && strings.Contains(text, old) {
			t.Fatalf("case %d: %q reported missing from %q", i, old, text)
		}
		if !editIsNotFound(err) && (all || editOverlapCount(text, old) < 2) {
			t.Fatalf("case %d: %q reported ambiguous in %q", i, old, text)
		}
		return
	}
	var out bytes.Buffer
	res, err := editReplace(&out, []byte(text), []byte(old), []byte(repl), first, all, &hunkBudget{hunks: 1 << 30, bytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	if all {
		n = -1
	}
	want := strings.Replace(text, old, repl, n)
	if out.String() != want {
		t.Fatalf("case %d: output %q, want %q", i, out.String(), want)
	}
	if wantSites := strings.Count(text, old); all && res.sites != wantSites || !all && res.sites != 1 {
		t.Fatalf("case %d: %d sites", i, res.sites)
	}
	hunks := diffCheckMeta(t, diffMeta{Path: "f", Sites: res.sites, Hunks: res.hunks})
	if !utf8.ValidString(text) || !utf8.ValidString(want) {
		hunks = res.hunks // persisting shows invalid bytes as U+FFFD
	}
	got, err := hunkApply(text, hunks)
	if err != nil || got != want {
		t.Fatalf("case %d: text %q old %q new %q all %v\nhunks %+v\napply: %v\ngot  %q\nwant %q", i, text, old, repl, all, res.hunks, err, got, want)
	}
	if len(res.hunks) == 0 || res.omitted != 0 || res.firstLine != strings.Count(text[:first], "\n")+1 {
		t.Fatalf("case %d: %d hunks, %d omitted, first line %d", i, len(res.hunks), res.omitted, res.firstLine)
	}
}

func editIsNotFound(err error) bool { return errors.Is(err, errEditNotFound) }

func newEditRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func editOverlapCount(text, old string) int {
	n := 0
	for i := 0; i+len(old) <= len(text); i++ {
		if text[i:i+len(old)] == old {
			n++
		}
	}
	return n
}

func TestEditNearMatchIsBounded(t *testing.T) {
	// Every line anchors every window: the comparison budget stops the search.
	text := []byte(strings.Repeat("same line\n", 200000))
	old := []byte(strings.Repeat("same line\n", 900) + "different\n")
	n, ok := editNearMatch(text, old)
	if !ok || n.score != 900 || n.start != 1 {
		t.Fatalf("near %+v %v", n, ok)
	}
	if _, ok := editNearMatch(text, []byte(strings.Repeat("x\n", editNearMaxLines+1))); ok {
		t.Fatal("an over-long old_string gets no suggestion")
	}
}

func TestEditToCRLF(t *testing.T) {
	for in, want := range map[string]string{
		"":            "",
		"a":           "a",
		"\n":          "\r\n",
		"a\nb\r\nc\n": "a\r\nb\r\nc\r\n",
		"\r\n\n":      "\r\n\r\n",
	} {
		if got := string(editToCRLF([]byte(in))); got != want {
			t.Errorf("editToCRLF(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzEditMatch drives the matcher, the line-ending and BOM handling and the
// hunk tracker with arbitrary files and strings.
func FuzzEditMatch(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", false)
	f.Add("\xEF\xBB\xBFx\r\ny\r\n", "x\ny", "z", true)
	f.Fuzz(func(t *testing.T, data, old, repl string, all bool) {
		if old == "" || old == repl {
			return
		}
		_, text, o, r := editPrepare([]byte(data), []byte(old), []byte(repl))
		if bytes.Equal(o, r) {
			return
		}
		if _, err := editLocate(text, o, all); editIsNotFound(err) {
			if n, ok := editNearMatch(text, o); ok {
				lines := bytes.Count(text, []byte("\n")) + 1
				if n.start < 1 || n.start > lines || n.score > n.lines || n.offset > len(text) {
					t.Fatalf("near match %+v outside a %d-line file", n, lines)
				}
			}
			_ = editNotFoundMessage("f", text, o)
			return
		}
		editCheckReplace(t, 0, string(text), string(o), string(r), all)
	})
}

// Files need not be UTF-8; the log is JSON. The edit lands byte for byte, the
// meta still narrows (with U+FFFD in the card) and error messages stay valid.
func TestEditNonUTF8File(t *testing.T) {
	f := newEditFixture(t)
	f.put("latin1.txt", "caf\xe9\nna\xefve\nend line\n", 0o644)
	f.read("latin1.txt")
	args, r := f.ok(Edit(), editArgs{Path: "latin1.txt", OldString: "na", NewString: "NA"})
	if f.get("latin1.txt") != "caf\xe9\nNA\xefve\nend line\n" {
		t.Fatalf("file holds %q", f.get("latin1.txt"))
	}
	c, ok := Edit().PresentResult(args, r).(*card.DiffResult)
	if !ok || len(c.Diffs) != 1 || c.Diffs[0].NewText != "caf\uFFFD\nNA\uFFFDve\nend line\n" {
		t.Fatalf("card %#v", Edit().PresentResult(args, r))
	}
	msg := f.fail(Edit(), editArgs{Path: "latin1.txt", OldString: "NA\uFFFDve\nend  line\n", NewString: "x"})
	if !strings.Contains(msg, "2: NA\uFFFDve") {
		t.Fatalf("message %q", msg)
	}
}
