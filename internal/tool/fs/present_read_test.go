package fs

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func TestLangFromPath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"main.go", "go"},
		{"a/b/c/server.go", "go"},
		{"script.py", "python"},
		{"types.pyi", "python"},
		{"app.js", "javascript"},
		{"mod.mjs", "javascript"},
		{"cfg.cjs", "javascript"},
		{"view.jsx", "react"},
		{"index.ts", "typescript"},
		{"x.test.ts", "typescript"},
		{"Page.tsx", "tsx"},
		{"lib.rs", "rust"},
		{"main.c", "c"},
		{"main.h", "c"},
		{"main.cc", "cpp"},
		{"main.cpp", "cpp"},
		{"main.hpp", "cpp"},
		{"Program.cs", "csharp"},
		{"Main.java", "java"},
		{"App.kt", "kotlin"},
		{"build.gradle.kts", "kotlin"},
		{"x.scala", "scala"},
		{"x.swift", "swift"},
		{"x.rb", "ruby"},
		{"x.php", "php"},
		{"x.pl", "perl"},
		{"x.lua", "lua"},
		{"run.sh", "bash"},
		{"run.bash", "bash"},
		{"rc.zsh", "zsh"},
		{"config.fish", "fish"},
		{"x.ps1", "powershell"},
		{"x.bat", "batch"},
		{"package.json", "json"},
		{".eslintrc.json", "json"},
		{"ci.yaml", "yaml"},
		{"ci.yml", "yaml"},
		{"Cargo.toml", "toml"},
		{"setup.ini", "ini"},
		{"pom.xml", "xml"},
		{"index.html", "html"},
		{"index.htm", "html"},
		{"site.css", "css"},
		{"site.scss", "scss"},
		{"App.vue", "vue"},
		{"App.svelte", "svelte"},
		{"README.md", "markdown"},
		{"notes.markdown", "markdown"},
		{"doc.rst", "rst"},
		{"paper.tex", "tex"},
		{"schema.sql", "sql"},
		{"api.graphql", "graphql"},
		{"msg.proto", "protobuf"},
		{"main.tf", "terraform"},
		{"flake.nix", "nix"},
		{"fix.diff", "diff"},
		{"fix.patch", "diff"},
		{"Main.hs", "haskell"},
		{"x.ml", "ocaml"},
		{"x.ex", "elixir"},
		{"x.erl", "erlang"},
		{"x.clj", "clojure"},
		{"x.dart", "dart"},
		{"x.zig", "zig"},
		{"x.r", "r"},
		{"x.jl", "julia"},
		{"data.csv", "csv"},
		// Case-insensitive.
		{"MAIN.GO", "go"},
		{"Readme.MD", "markdown"},
		{"/abs/Path/X.Py", "python"},
		// The last segment and the text after its last dot decide.
		{"dir.go/hosts", ""},
		{"archive.tar.gz", ""},
		{"v1.2/notes.txt", ""},
		// No language: dotfile, no extension, trailing dot, unknown extension.
		{".gitignore", ""},
		{"src/.env", ""},
		{"/etc/hosts", ""},
		{"Makefile", ""},
		{"foo.", ""},
		{"dir/foo.", ""},
		{"data.unknownext", ""},
		{"", ""},
		{"dir/", ""},
	} {
		if got := langFromPath(tc.path); got != tc.want {
			t.Errorf("langFromPath(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	if len(langByExt) < 40 {
		t.Fatalf("langByExt has %d extensions, want at least 40", len(langByExt))
	}
	for ext, lang := range langByExt {
		if ext != strings.ToLower(ext) || lang == "" {
			t.Errorf("table entry %q: %q (keys must be lower case, values non-empty)", ext, lang)
		}
	}
}

// TestReadMetaDecode feeds persisted meta through tool.DecodeMeta (strict decode,
// then Validate) and the read presenter: every rejection DESIGN.md §3 lists.
func TestReadMetaDecode(t *testing.T) {
	envelope := tool.Result{Content: []card.Content{card.Text(readEnvelope("/w/a", "1: x\n\n(End of file - total 1 line)"))}}
	present := func(raw string) card.Result {
		r := envelope
		r.Meta = jsontext.Value(raw)
		return Read().PresentResult([]byte(`{"path":"a"}`), r)
	}
	accept := []struct {
		name, raw string
		want      readMeta
	}{
		{"with lang", `{"path":"/w/a.go","offset":1,"lines":[{"number":1,"text":"package a"},{"number":2,"text":""}],"totalLines":2,"lang":"go"}`,
			readMeta{Path: "/w/a.go", Offset: 1, Lines: []card.ReadLine{{Number: 1, Text: "package a"}, {Number: 2, Text: ""}}, TotalLines: 2, Lang: "go"}},
		{"without lang", `{"path":"/w/hosts","offset":3,"lines":[{"number":3,"text":"x"}],"totalLines":9}`,
			readMeta{Path: "/w/hosts", Offset: 3, Lines: []card.ReadLine{{Number: 3, Text: "x"}}, TotalLines: 9}},
		{"empty window at a positive offset", `{"path":"/w/a","offset":40,"lines":[],"totalLines":812}`,
			readMeta{Path: "/w/a", Offset: 40, Lines: []card.ReadLine{}, TotalLines: 812}},
		{"empty file", `{"path":"/w/e","offset":1,"lines":[],"totalLines":0}`,
			readMeta{Path: "/w/e", Offset: 1, Lines: []card.ReadLine{}, TotalLines: 0}},
		{"first line after offset", `{"path":"/w/a","offset":2,"lines":[{"number":5,"text":"x"}],"totalLines":5}`,
			readMeta{Path: "/w/a", Offset: 2, Lines: []card.ReadLine{{Number: 5, Text: "x"}}, TotalLines: 5}},
		{"at least", `{"path":"/w/a","offset":1,"lines":[{"number":1,"text":"x"}],"totalLines":7,"totalLinesAtLeast":true}`,
			readMeta{Path: "/w/a", Offset: 1, Lines: []card.ReadLine{{Number: 1, Text: "x"}}, TotalLines: 7, TotalLinesAtLeast: true}},
		{"with a stamp", `{"path":"/w/a","offset":1,"lines":[],"totalLines":0,"stamp":` + stampOK + `}`,
			readMeta{Path: "/w/a", Offset: 1, Lines: []card.ReadLine{}, TotalLines: 0}},
	}
	for _, tc := range accept {
		got := tool.DecodeMeta[readMeta](jsontext.Value(tc.raw))
		if got == nil {
			t.Errorf("%s: rejected %s", tc.name, tc.raw)
			continue
		}
		if c, ok := present(tc.raw).(*card.ReadResult); !ok || c.TotalLines != tc.want.TotalLines || c.TotalLinesAtLeast != tc.want.TotalLinesAtLeast {
			t.Errorf("%s: presented as %#v", tc.name, present(tc.raw))
		}
		if got.Path != tc.want.Path || got.Offset != tc.want.Offset || got.TotalLines != tc.want.TotalLines ||
			got.Lang != tc.want.Lang || got.Lines == nil || !slices.Equal(got.Lines, tc.want.Lines) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}

	const line1 = `[{"number":1,"text":"a"}]`
	reject := []struct{ name, raw string }{
		{"nil", ``},
		{"not JSON", `{path`},
		{"trailing data", `{"path":"/a","offset":1,"lines":[],"totalLines":0} {}`},
		{"null", `null`},
		{"string", `"meta"`},
		{"number", `3`},
		{"array", `[{"path":"/a","offset":1,"lines":[],"totalLines":0}]`},
		{"duplicate member", `{"path":"/a","path":"/b","offset":1,"lines":[],"totalLines":0}`},
		{"missing path", `{"offset":1,"lines":[],"totalLines":0}`},
		{"path not string", `{"path":7,"offset":1,"lines":[],"totalLines":0}`},
		{"path null", `{"path":null,"offset":1,"lines":[],"totalLines":0}`},
		{"empty path", `{"path":"","offset":1,"lines":[],"totalLines":0}`},
		{"missing totalLines", `{"path":"/a","offset":1,"lines":[]}`},
		{"totalLines string", `{"path":"/a","offset":1,"lines":[],"totalLines":"3"}`},
		{"totalLines negative", `{"path":"/a","offset":1,"lines":[],"totalLines":-1}`},
		{"totalLines fractional", `{"path":"/a","offset":1,"lines":[],"totalLines":1.5}`},
		{"totalLines huge", `{"path":"/a","offset":1,"lines":[],"totalLines":1e300}`},
		{"totalLines overflows float", `{"path":"/a","offset":1,"lines":[],"totalLines":1e400}`},
		{"missing lines", `{"path":"/a","offset":1,"totalLines":0}`},
		{"lines null", `{"path":"/a","offset":1,"lines":null,"totalLines":0}`},
		{"lines object", `{"path":"/a","offset":1,"lines":{"number":1,"text":"a"},"totalLines":1}`},
		{"line item not object", `{"path":"/a","offset":1,"lines":["a"],"totalLines":1}`},
		{"line item null", `{"path":"/a","offset":1,"lines":[null],"totalLines":1}`},
		{"line missing number", `{"path":"/a","offset":1,"lines":[{"text":"a"}],"totalLines":1}`},
		{"line missing text", `{"path":"/a","offset":1,"lines":[{"number":1}],"totalLines":1}`},
		{"line text not string", `{"path":"/a","offset":1,"lines":[{"number":1,"text":5}],"totalLines":1}`},
		{"line number string", `{"path":"/a","offset":1,"lines":[{"number":"1","text":"a"}],"totalLines":1}`},
		{"line number zero", `{"path":"/a","offset":1,"lines":[{"number":0,"text":"a"}],"totalLines":1}`},
		{"line number fractional", `{"path":"/a","offset":1,"lines":[{"number":1.5,"text":"a"}],"totalLines":2}`},
		{"line number huge", `{"path":"/a","offset":1,"lines":[{"number":1e300,"text":"a"}],"totalLines":1e300}`},
		{"line number negative", `{"path":"/a","offset":1,"lines":[{"number":-1,"text":"a"}],"totalLines":1}`},
		{"lang not string", `{"path":"/a","offset":1,"lines":` + line1 + `,"totalLines":1,"lang":3}`},
		{"lang null", `{"path":"/a","offset":1,"lines":` + line1 + `,"totalLines":1,"lang":null}`},
		{"missing offset", `{"path":"/a","lines":` + line1 + `,"totalLines":1}`},
		{"offset string", `{"path":"/a","offset":"1","lines":` + line1 + `,"totalLines":1}`},
		{"offset zero", `{"path":"/a","offset":0,"lines":` + line1 + `,"totalLines":1}`},
		{"offset negative", `{"path":"/a","offset":-2,"lines":[],"totalLines":1}`},
		{"offset fractional", `{"path":"/a","offset":1.5,"lines":[],"totalLines":3}`},
		{"offset huge", `{"path":"/a","offset":1e300,"lines":[],"totalLines":3}`},
		{"first line below offset", `{"path":"/a","offset":3,"lines":[{"number":2,"text":"a"}],"totalLines":5}`},
		{"line numbers repeat", `{"path":"/a","offset":1,"lines":[{"number":1,"text":"a"},{"number":1,"text":"b"}],"totalLines":5}`},
		{"line numbers decrease", `{"path":"/a","offset":1,"lines":[{"number":2,"text":"a"},{"number":1,"text":"b"}],"totalLines":5}`},
		{"line number exceeds totalLines", `{"path":"/a","offset":1,"lines":[{"number":1,"text":"a"},{"number":3,"text":"b"}],"totalLines":2}`},
		{"lines in an empty file", `{"path":"/a","offset":1,"lines":` + line1 + `,"totalLines":0}`},
		{"invalid UTF-8", "{\"path\":\"/a\xff\",\"offset\":1,\"lines\":[],\"totalLines\":0}"},
		// v2 decodes integers spelled as integers only, and refuses what it does not know.
		{"integral float spelling", `{"path":"/w/a","offset":1.0,"lines":[{"number":1e0,"text":"x"}],"totalLines":2}`},
		{"unknown member", `{"path":"/w/a","offset":1,"lines":[],"totalLines":1,"future":true}`},
		{"unknown line member", `{"path":"/w/a","offset":1,"lines":[{"number":1,"text":"x","extra":1}],"totalLines":1}`},
		{"totalLines null", `{"path":"/a","offset":1,"lines":[],"totalLines":null}`},
		{"offset null", `{"path":"/a","offset":null,"lines":[],"totalLines":0}`},
		{"line text null", `{"path":"/a","offset":1,"lines":[{"number":1,"text":null}],"totalLines":1}`},
		{"at least zero lines", `{"path":"/a","offset":1,"lines":[],"totalLines":0,"totalLinesAtLeast":true}`},
		{"at least not a bool", `{"path":"/a","offset":1,"lines":[],"totalLines":3,"totalLinesAtLeast":1}`},
		{"stamp with a bad hash", `{"path":"/a","offset":1,"lines":[],"totalLines":0,"stamp":` + strings.Replace(stampOK, sha64, "x", 1) + `}`},
		{"stamp null", `{"path":"/a","offset":1,"lines":[],"totalLines":0,"stamp":null}`},
	}
	for _, tc := range reject {
		if got := tool.DecodeMeta[readMeta](jsontext.Value(tc.raw)); got != nil {
			t.Errorf("%s: accepted %s as %+v", tc.name, tc.raw, got)
		}
		if c := present(tc.raw); c != nil {
			t.Errorf("%s: presented %s as %#v", tc.name, tc.raw, c)
		}
	}
}

func TestPresentReadCall(t *testing.T) {
	for _, tc := range []struct {
		p     ReadParams
		title string
		line  int
	}{
		{ReadParams{Path: "src/main.go"}, "Read src/main.go", 1},
		{ReadParams{Path: "src/main.go", Offset: 40}, "Read src/main.go (from line 40)", 40},
		{ReadParams{Path: "src/main.go", Offset: 40, Limit: 10}, "Read src/main.go (lines 40-49)", 40},
		{ReadParams{Path: "/abs/x.txt", Limit: 5}, "Read /abs/x.txt (lines 1-5)", 1},
		{ReadParams{Path: "x.txt", Offset: 3, Limit: math.MaxInt}, "Read x.txt (from line 3)", 3},
	} {
		args, err := json.Marshal(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		// Through the erased tool, which puts the tool's kind on the card.
		c, ok := Read().PresentCall(args, nil).(*card.GenericCall)
		if !ok {
			t.Fatalf("%+v: want *card.GenericCall", tc.p)
		}
		if c.Title != tc.title || c.ToolKind != card.ToolRead || len(c.Locations) != 1 ||
			c.Locations[0].Path != tc.p.Path || c.Locations[0].Line == nil || *c.Locations[0].Line != tc.line ||
			c.RawInput != nil || c.Content != nil {
			t.Errorf("%+v: card %+v", tc.p, c)
		}
	}
	// Through the erased tool, bad arguments still give a generic card.
	if c, ok := Read().PresentCall([]byte(`{"path": 5}`), nil).(*card.GenericCall); !ok || c.Title != "read" {
		t.Fatalf("bad args card = %+v", c)
	}
}

func TestReadStripEnvelope(t *testing.T) {
	body := "1: a\n\n(End of file - total 1 line)"
	if got, ok := readStripEnvelope(readEnvelope("/w/a.txt", body)); !ok || got != body {
		t.Fatalf("round trip = %q %v", got, ok)
	}
	for _, s := range []string{
		"",
		"plain text",
		"<path>/a</path>\n<type>file</type>\n<content>\n1: a",                       // unclosed
		"<path>/a</path>\n<type>directory</type>\n<content>\n1: a\n</content>",      // wrong type
		"<path></path>\n<type>file</type>\n<content>\n1: a\n</content>",             // no path
		"<path>/a\n/b</path>\n<type>file</type>\n<content>\n1: a\n</content>",       // path with newline
		" <path>/a</path>\n<type>file</type>\n<content>\n1: a\n</content>",          // leading junk
		"<path>/a</path>\n<type>file</type>\n<content>\n1: a\n</content>\ntrailing", // trailing junk
	} {
		if got, ok := readStripEnvelope(s); ok {
			t.Errorf("accepted %q as %q", s, got)
		}
	}
}

func TestPresentReadResult(t *testing.T) {
	const path = "/w/src/a.go"
	body := "2: b\n3: c\n\n(File has more lines. Showing lines 2-3 of 9. Use offset=4 to continue.)"
	env := readEnvelope(path, body)
	meta := []byte(`{"path":"/w/src/a.go","offset":2,"lines":[{"number":2,"text":"b"},{"number":3,"text":"c"}],"totalLines":9,"lang":"go"}`)
	p := ReadParams{Path: "src/a.go", Offset: 2, Limit: 2}
	ok := tool.Result{Content: []card.Content{card.Text(env)}, Meta: meta}

	got := presentReadDecoded(p, ok)
	rc, isRead := got.(*card.ReadResult)
	if !isRead {
		t.Fatalf("want *card.ReadResult, got %T", got)
	}
	want := card.ReadResult{
		Title:      "Read src/a.go (lines 2-3)",
		Path:       path,
		Offset:     2,
		Lines:      []card.ReadLine{{Number: 2, Text: "b"}, {Number: 3, Text: "c"}},
		TotalLines: 9,
		Lang:       "go",
		Content:    []card.Content{card.Text(body)},
	}
	if rc.Title != want.Title || rc.Path != want.Path || rc.Offset != want.Offset || rc.TotalLines != want.TotalLines ||
		rc.Lang != want.Lang || !slices.Equal(rc.Lines, want.Lines) || !slices.Equal(rc.Content, want.Content) {
		t.Fatalf("card = %+v\nwant %+v", rc, want)
	}
	// The card survives the strict codec, as the log and every consumer need.
	enc, err := json.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := card.DecodeResult(enc)
	if err != nil {
		t.Fatalf("decode %s: %v", enc, err)
	}
	if br, _ := back.(*card.ReadResult); br == nil || br.Offset != 2 || !slices.Equal(br.Lines, want.Lines) {
		t.Fatalf("round trip = %+v", back)
	}

	// An empty window keeps its offset and has a plain title.
	emptyMeta := []byte(`{"path":"/w/e.txt","offset":1,"lines":[],"totalLines":0}`)
	ec, _ := presentReadDecoded(ReadParams{Path: "e.txt"}, tool.Result{
		Content: []card.Content{card.Text(readEnvelope("/w/e.txt", "(File is empty - total 0 lines)"))}, Meta: emptyMeta,
	}).(*card.ReadResult)
	if ec == nil || ec.Title != "Read e.txt" || ec.Offset != 1 || ec.Lines == nil || len(ec.Lines) != 0 || ec.Lang != "" {
		t.Fatalf("empty card = %+v", ec)
	}

	fallbacks := []struct {
		name string
		r    tool.Result
	}{
		{"error result", tool.Result{Content: ok.Content, Meta: meta, IsError: true}},
		{"no content", tool.Result{Meta: meta}},
		{"two text blocks", tool.Result{Content: []card.Content{card.Text(env), card.Text("more")}, Meta: meta}},
		{"image block", tool.Result{Content: []card.Content{card.Image("image/png", "iVBORw0KGgo=")}, Meta: meta}},
		{"not an envelope", tool.Result{Content: []card.Content{card.Text(body)}, Meta: meta}},
		{"malformed envelope", tool.Result{Content: []card.Content{card.Text(strings.TrimSuffix(env, "</content>"))}, Meta: meta}},
		{"missing meta", tool.Result{Content: ok.Content}},
		{"malformed meta", tool.Result{Content: ok.Content, Meta: []byte(`{"path":"/w/src/a.go","offset":0,"lines":[],"totalLines":9}`)}},
		{"meta not an object", tool.Result{Content: ok.Content, Meta: []byte(`[]`)}},
	}
	for _, tc := range fallbacks {
		if got := presentReadDecoded(p, tc.r); got != nil {
			t.Errorf("%s: want nil, got %+v", tc.name, got)
		}
	}
}

// TestPresentReadResultOfRealReads ties Execute's output to the presenter: every
// successful read presents as a read card whose content is the envelope's body.
func TestPresentReadResultOfRealReads(t *testing.T) {
	f := newReadFixture(t, false)
	f.write("src/a.rs", readNumbered(30))
	f.write("notes", []byte("no extension\n"))
	for _, args := range []string{readArgs("src/a.rs", 0, 0), readArgs("src/a.rs", 10, 5), readArgs("notes", 0, 0)} {
		r := f.run(args)
		c, isRead := Read().PresentResult([]byte(args), r).(*card.ReadResult)
		if !isRead {
			t.Fatalf("%s: no read card for %+v", args, r)
		}
		body, _ := readStripEnvelope(r.TextOf())
		if len(c.Content) != 1 || c.Content[0].Text != body || !strings.Contains(body, "1") {
			t.Fatalf("%s: content %+v", args, c.Content)
		}
		if err := card.ValidateResult(c); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
	}
	if c, _ := Read().PresentResult([]byte(readArgs("src/a.rs", 0, 0)), f.run(readArgs("src/a.rs", 0, 0))).(*card.ReadResult); c.Lang != "rust" || c.TotalLines != 30 {
		t.Fatalf("card = %+v", c)
	}
	if r := f.run(readArgs("missing.rs", 0, 0)); Read().PresentResult([]byte(readArgs("missing.rs", 0, 0)), r) != nil {
		t.Fatal("an error result presented as a card")
	}
}

// presentReadDecoded presents a result as the framework does: meta decoded first.
func presentReadDecoded(p ReadParams, r tool.Result) card.Result {
	return presentReadResult(p, r, tool.DecodeMeta[readMeta](r.Meta))
}
