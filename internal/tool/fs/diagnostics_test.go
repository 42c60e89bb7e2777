package fs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The language servers are installed by .ci/run outside the tree: gopls with
// go install into $DSH_TEST_GO/bin (default ~/.cache/dsh-test-go), pyright
// with npm into $DSH_TEST_NPM (default ~/.cache/dsh-test-npm). With
// DSH_REQUIRE_LSP=1 a missing one fails the test instead of skipping it.
func serverBin(t *testing.T, env, cache, rel string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", cache)
	}
	bin := filepath.Join(dir, rel)
	if _, err := os.Stat(bin); err != nil {
		msg := "language server " + bin + " is not installed (see .ci/run)"
		if os.Getenv("DSH_REQUIRE_LSP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// withServer attaches a manager that runs bin for lang; the long bound keeps
// a slow machine's first load from reading as "no diagnostics".
func (f *editFixture) withServer(lang string, argv ...string) *lsp.Manager {
	m := lsp.NewManager(f.root, lsp.Config{Wait: 2 * time.Minute, Servers: map[string]lsp.Server{lang: {Command: argv}}, Trust: lsp.NewTrust(true, false, nil, "")})
	lsp.Attach(f.sess, m)
	return m
}

// checkDiagnostics edits a file into a type error and back, through the real
// edit and write tools, and checks the model's text and the diff card.
func checkDiagnostics(t *testing.T, f *editFixture, path, good, bad, badNeedle string, line int) {
	t.Helper()
	f.put(path, good, 0o644)
	f.read(path)
	// A first edit opens the file in the server and must find it clean.
	raw, r := f.ok(Edit(), map[string]any{"path": path, "old_string": good, "new_string": good + "\n"})
	c := diffResult(t, Edit(), raw, r)
	if len(c.Diagnostics) != 0 || !strings.Contains(r.TextOf(), "no errors or warnings") {
		t.Fatalf("clean file: diagnostics %+v, text %q", c.Diagnostics, r.TextOf())
	}
	raw, r = f.ok(Write(), map[string]any{"path": path, "content": bad})
	c = diffResult(t, Write(), raw, r)
	var hit *card.Diagnostic
	for i, d := range c.Diagnostics {
		if d.Severity == card.SeverityError && d.Line == line && strings.Contains(d.Message, badNeedle) {
			hit = &c.Diagnostics[i]
		}
	}
	if hit == nil || hit.Path != path {
		t.Fatalf("type error at line %d (%q) not on the card: %+v", line, badNeedle, c.Diagnostics)
	}
	want := path + ":" + strconv.Itoa(line) + ":"
	if !strings.Contains(r.TextOf(), want) || !strings.Contains(r.TextOf(), badNeedle) {
		t.Errorf("the model's text lacks %q and %q: %q", want, badNeedle, r.TextOf())
	}
	raw, r = f.ok(Write(), map[string]any{"path": path, "content": good})
	if c = diffResult(t, Write(), raw, r); len(c.Diagnostics) != 0 {
		t.Errorf("the fix did not clear the diagnostics: %+v", c.Diagnostics)
	}
}

// diffResult presents a logged result and proves the card is in the union's shape.
func diffResult(t *testing.T, tl tool.Tool, raw []byte, r tool.Result) *card.DiffResult {
	t.Helper()
	c, ok := tl.PresentResult(raw, r).(*card.DiffResult)
	if !ok {
		t.Fatalf("result card is not a diff: %#v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := card.DecodeResult(b); err != nil {
		t.Fatalf("card %s: %v", b, err)
	}
	return c
}

func TestGoplsDiagnosticsAfterEdits(t *testing.T) {
	bin := serverBin(t, "DSH_TEST_GO", "dsh-test-go", "bin/gopls")
	f := newEditFixture(t)
	f.put("go.mod", "module example.com/m\n\ngo 1.22\n", 0o644)
	m := f.withServer("go", bin)
	good := "package m\n\nfunc F() int {\n\treturn 1\n}\n"
	bad := "package m\n\nfunc F() int {\n\treturn \"one\"\n}\n"
	checkDiagnostics(t, f, "m.go", good, bad, "string", 4)
	closedGone(t, f, m)
}

func TestPyrightDiagnosticsAfterEdits(t *testing.T) {
	bin := serverBin(t, "DSH_TEST_NPM", "dsh-test-npm", "node_modules/.bin/pyright-langserver")
	f := newEditFixture(t)
	m := f.withServer("python", bin, "--stdio")
	good := "def f() -> int:\n    return 1\n"
	bad := "def f() -> int:\n    return \"one\"\n"
	checkDiagnostics(t, f, "m.py", good, bad, "not assignable", 2)
	closedGone(t, f, m)
}

// closedGone closes the session and proves its server, and all it started
// (pyright's node workers, gopls's go list), is gone.
func closedGone(t *testing.T, f *editFixture, m *lsp.Manager) {
	t.Helper()
	pids := m.Pids()
	if len(pids) != 1 {
		t.Fatalf("servers running: %v, want one", pids)
	}
	if err := f.sess.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pg := range pids {
		proctest.GroupGone(t, pg)
	}
}

// A language without an installed server leaves edits as they were.
func TestMissingServerLeavesEditsAlone(t *testing.T) {
	f := newEditFixture(t)
	f.withServer("go", filepath.Join(f.root, "no-such-gopls"))
	f.put("m.go", "package m\n", 0o644)
	f.read("m.go")
	raw, r := f.ok(Edit(), map[string]any{"path": "m.go", "old_string": "package m", "new_string": "package m // x"})
	if c := diffResult(t, Edit(), raw, r); c.Diagnostics != nil {
		t.Errorf("diagnostics without a server: %+v", c.Diagnostics)
	}
	if strings.Contains(r.TextOf(), "diagnostics") || strings.Contains(r.TextOf(), "gopls") {
		t.Errorf("text mentions a server that is not there: %q", r.TextOf())
	}
	if f.get("m.go") != "package m // x\n" {
		t.Errorf("file = %q", f.get("m.go"))
	}
}

// The diagnostics tool checks a file as it is on disk, and lists what gopls
// reported for the workspace's other packages; both as search cards whose
// matches are the problems' lines.
func TestDiagnosticsTool(t *testing.T) {
	bin := serverBin(t, "DSH_TEST_GO", "dsh-test-go", "bin/gopls")
	f := newEditFixture(t)
	f.put("go.mod", "module example.com/m\n\ngo 1.22\n", 0o644)
	f.put("a/a.go", "package a\n\nfunc A() int { return \"a\" }\n", 0o644)
	f.put("b/b.go", "package b\n\nvar B int = \"b\"\n", 0o644)
	f.withServer("go", bin)
	tl := Diagnostics()
	raw, r := f.ok(tl, map[string]any{"path": "a/a.go"})
	c, ok := tl.PresentResult(raw, r).(*card.SearchResult)
	if !ok || len(c.Files) != 1 || c.Files[0].Path != "a/a.go" || c.Files[0].Matches[0].Line != 3 ||
		!strings.HasPrefix(c.Files[0].Matches[0].Text, "error: ") {
		t.Fatalf("file card = %+v (text %q)", c, r.TextOf())
	}
	if !strings.Contains(r.TextOf(), "a/a.go:3:") {
		t.Errorf("text = %q", r.TextOf())
	}
	// gopls reports b's package once its workspace is loaded, unasked; the
	// directory listing shows it when it has come.
	var dc *card.SearchResult
	for range 200 {
		raw, r = f.ok(tl, map[string]any{})
		dc, _ = tl.PresentResult(raw, r).(*card.SearchResult)
		if dc != nil && len(dc.Files) == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if dc == nil || len(dc.Files) != 2 || dc.Files[1].Path != "b/b.go" {
		t.Fatalf("workspace card = %+v (text %q)", dc, r.TextOf())
	}
	b, err := json.Marshal(dc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := card.DecodeResult(b); err != nil {
		t.Errorf("card %s: %v", b, err)
	}
	// No server for the language: said, not an error.
	f.put("notes.txt", "x\n", 0o644)
	if _, r := f.ok(tl, map[string]any{"path": "notes.txt"}); !strings.Contains(r.TextOf(), "No language server") {
		t.Errorf("text file: %q", r.TextOf())
	}
}
