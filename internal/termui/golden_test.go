package termui

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scene draws some items on a renderer; each golden file holds one scene in every
// variant below.
type scene struct {
	name string
	draw func(r *Renderer) error
}

type variant struct {
	name string
	opts Options
}

var variants = []variant{
	{"plain, width 100", Options{}},
	{"color, width 100", Options{Color: true}},
	{"plain, width 40", Options{Width: 40}},
	{"color, width 40", Options{Color: true, Width: 40}},
}

func numbered(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func readLines(first int, text string) []card.ReadLine {
	var out []card.ReadLine
	for i, l := range strings.Split(text, "\n") {
		out = append(out, card.ReadLine{Number: first + i, Text: l})
	}
	return out
}

const goSource = `// Package demo shows a highlighted window.
package demo

import "fmt"

/* A block comment
   that spans lines. */
func Greet(name string) string {
	if name == "" {
		return "hello, world" // the default
	}
	return fmt.Sprintf("hello, %s — %d", name, 42)
}`

const markdownSample = "# Plan\n\nI **changed** the parser so `Parse` returns *early* on ~~bad~~ empty input; see [the docs](https://example.com/docs).\n\n" +
	"1. first step, with a line long enough that it has to wrap at forty columns\n2. second\n   - nested item\n\n" +
	"> a quote that\n> spans lines\n\n```go\nfunc Parse(s string) error {\n\treturn nil // a long comment that goes past the edge of a narrow terminal\n}\n```\n\n" +
	"| name | value |\n|------|-------|\n| a    | 1     |\n| bb   | 22    |\n\n---\n\n- [x] done\n- [ ] todo <b>raw</b>\n"

func all(steps ...func(r *Renderer) error) func(r *Renderer) error {
	return func(r *Renderer) error {
		for _, s := range steps {
			if err := s(r); err != nil {
				return err
			}
		}
		return nil
	}
}

func call(c card.Call) func(r *Renderer) error { return func(r *Renderer) error { return r.Call(c) } }
func result(res card.Result) func(r *Renderer) error {
	return func(r *Renderer) error { return r.Result(res, nil, false) }
}

var scenes = []scene{
	{"generic-call", call(&card.GenericCall{
		Title: "Read internal/termui/termui.go", ToolKind: "read",
		Locations: []card.Location{{Path: "internal/termui/termui.go", Line: card.Ptr(12)}, {Path: "README.md"}},
		Content: []card.Content{
			card.Text("first block line one\nline two"),
			card.Image("image/png", "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
		},
	})},
	{"generic-call-raw-input", call(&card.GenericCall{
		Title: "todo_write", ToolKind: "think",
		RawInput: card.RawJSON("{\n  \"todos\": [ {\"content\": \"write the renderer\", \"status\": \"in_progress\"} ]\n}"),
	})},
	{"terminal-call", call(&card.TerminalCall{
		Title:       "go test ./internal/termui/...\ngo vet ./internal/termui/ && echo done",
		Description: "Run the renderer's tests and vet it",
		Cwd:         "/work/main",
	})},
	{"terminal-call-bare", call(&card.TerminalCall{Title: "ls -la"})},
	{"diff-call-edit", call(&card.DiffCall{
		Title: "Edit cards.go",
		Diffs: []card.FileDiff{{
			Path:    "internal/termui/cards.go",
			OldText: card.Ptr("func a() {\n\treturn 1\n}\n"),
			NewText: "func a() {\n\treturn 2 // changed\n}\n\nfunc b() {}\n",
		}},
	})},
	{"diff-approval-edit", func(r *Renderer) error {
		return r.Approval(&card.DiffCall{
			Title: "Edit cards.go",
			Diffs: []card.FileDiff{{
				Path:     "internal/termui/cards.go",
				OldText:  card.Ptr("func a() {\n\treturn 1\n}\n"),
				NewText:  "func a() {\n\treturn 2 // changed\n}\n\nfunc b() {}\n",
				OldStart: 40, NewStart: 40,
			}},
		})
	}},
	{"diff-call-new-file", call(&card.DiffCall{
		Title: "Write notes.txt",
		Diffs: []card.FileDiff{{Path: "notes.txt", NewText: "one\ntwo\nthree"}},
	})},
	{"generic-result", all(
		call(&card.GenericCall{Title: "job_list", ToolKind: "other"}),
		result(&card.GenericResult{Title: "2 jobs", Content: []card.Content{card.Text("job 1: running\njob 2: exited 0\n")}}),
	)},
	{"generic-result-error", all(
		call(&card.GenericCall{Title: "job_kill", ToolKind: "other"}),
		func(r *Renderer) error {
			return r.Result(&card.GenericResult{Content: []card.Content{card.Text("no such job: 7")}}, nil, true)
		},
	)},
	{"raw-result", all(
		call(&card.GenericCall{Title: "read", ToolKind: "read"}),
		func(r *Renderer) error {
			return r.Result(nil, []card.Content{
				card.Text("<path>a.txt</path>\n<content>\n1: hello\n</content>"),
				card.Image("image/jpeg", "AAAA"),
			}, false)
		},
	)},
	{"raw-error", all(
		call(&card.GenericCall{Title: "read missing.txt", ToolKind: "read"}),
		func(r *Renderer) error {
			return r.Result(nil, []card.Content{card.Text("file not found: missing.txt\ndid you mean: missing.md?")}, true)
		},
	)},
	{"terminal-results", all(
		call(&card.TerminalCall{Title: "true"}),
		result(&card.TerminalResult{ExitCode: card.Ptr(0)}),
		call(&card.TerminalCall{Title: "grep -r TODO ."}),
		result(&card.TerminalResult{Output: "a.go:3: TODO\r\nb.go:9:\tTODO later\n", ExitCode: card.Ptr(2)}),
		call(&card.TerminalCall{Title: "sleep 100"}),
		result(&card.TerminalResult{Output: "partial", Signal: "SIGKILL"}),
		call(&card.TerminalCall{Title: "make slow"}),
		result(&card.TerminalResult{Title: "make slow", Output: "building…\n", Signal: "SIGKILL", TimedOut: true}),
		call(&card.TerminalCall{Title: "weird"}),
		result(&card.TerminalResult{}),
		call(&card.TerminalCall{Title: "go build"}),
		result(&card.TerminalResult{ExitCode: card.Ptr(0), Sandbox: &card.Sandbox{Network: true}}),
		call(&card.TerminalCall{Title: "curl -s example.com > /etc/x"}),
		result(&card.TerminalResult{Output: "bash: /etc/x: Permission denied\n", ExitCode: card.Ptr(1),
			Sandbox: &card.Sandbox{Refused: "bash: /etc/x: Permission denied"}}),
	)},
	{"terminal-result-folded", all(
		call(&card.TerminalCall{Title: "seq 100"}),
		result(&card.TerminalResult{Output: numbered(100, func(i int) string { return fmt.Sprint(i) }), ExitCode: card.Ptr(0)}),
	)},
	{"terminal-streamed", all(
		call(&card.TerminalCall{Title: "make", Description: "Build"}),
		func(r *Renderer) error { return r.Progress("compiling a.go\ncomp") },
		func(r *Renderer) error { return r.Progress("iling b.go — " + strings.Repeat("x", 120) + "\r") },
		func(r *Renderer) error { return r.Progress("\nlinking\tdone\x1b[2J") },
		result(&card.TerminalResult{Output: "compiling a.go\ncompiling b.go\nlinking\tdone\n", ExitCode: card.Ptr(0)}),
		func(r *Renderer) error { return r.Note("turn ended") },
	)},
	{"read-go", result(&card.ReadResult{
		Path: "demo/greet.go", Offset: 10, TotalLines: 120, Lang: "go",
		Lines: readLines(10, goSource),
	})},
	{"read-no-lang", result(&card.ReadResult{
		Path: "Makefile", Offset: 1, TotalLines: 2,
		Lines: readLines(1, "all:\n\tgo build ./..."),
	})},
	{"read-folded", result(&card.ReadResult{
		Path: "big.py", Offset: 95, TotalLines: 400, Lang: "python",
		Lines: readLines(95, strings.TrimSuffix(numbered(100, func(i int) string { return fmt.Sprintf("x_%d = %d  # line", i, i) }), "\n")),
	})},
	{"read-empty-window", result(&card.ReadResult{Path: "huge.log", Offset: 120, TotalLines: 500, Lines: []card.ReadLine{}})},
	{"read-past-end", result(&card.ReadResult{Path: "short.txt", Offset: 9, TotalLines: 3, Lines: []card.ReadLine{}})},
	{"read-empty-file", result(&card.ReadResult{Path: "empty.txt", Offset: 1, TotalLines: 0, Lines: []card.ReadLine{}})},
	{"read-hostile", result(&card.ReadResult{
		Path: "hostile.txt", Offset: 1, TotalLines: 9,
		Lines: []card.ReadLine{
			{Number: 1, Text: "crlf line\r"},
			{Number: 2, Text: "\tone tab\tand\tmore"},
			{Number: 3, Text: "clear \x1b[2J\x1b]0;owned\x07 title"},
			{Number: 4, Text: "bell\a backspace\b del\x7f nul\x00"},
			{Number: 5, Text: "c1 \u009b31m csi"},
			{Number: 6, Text: "bidi \u202eevil\u202c end"},
			{Number: 7, Text: "bad utf8 \xff\xfe here"},
			{Number: 8, Text: "wide 漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字漢字 end"},
			{Number: 9, Text: "embedded\nnewline\rcarriage"},
		},
	})},
	{"diff-result-hunks", result(&card.DiffResult{
		Title: "Edited 2 files",
		Diffs: []card.FileDiff{
			{Path: "a.go", OldStart: 8, NewStart: 8,
				OldText: card.Ptr("ctx 8\nctx 9\nold 10\nctx 11\n"), NewText: "ctx 8\nctx 9\nnew 10\nnew 10b\nctx 11\n"},
			{Path: "a.go", OldStart: 97, NewStart: 98,
				OldText: card.Ptr("ctx 97\ngone 98\nctx 99\n"), NewText: "ctx 97\nctx 99\n"},
			{Path: "b.go", OldStart: 1, NewStart: 1,
				OldText: card.Ptr("package b\n"), NewText: "// Package b is new.\npackage b\n"},
		},
	})},
	{"diff-result-diagnostics", result(&card.DiffResult{
		Title: "Edit m.go",
		Diffs: []card.FileDiff{{Path: "m.go", OldStart: 3, NewStart: 3,
			OldText: card.Ptr("func F() int {\n\treturn 1\n}\n"), NewText: "func F() int {\n\treturn \"one\"\n}\n"}},
		Diagnostics: []card.Diagnostic{
			{Path: "m.go", Line: 4, Column: 9, Severity: card.SeverityError,
				Message: "cannot use \"one\" (untyped string constant) as int value in return statement", Source: "compiler"},
			{Path: "m.go", Line: 9, Column: 2, Severity: card.SeverityWarning, Message: "unused write\nsecond line"},
		},
	})},
	{"diff-result-create", result(&card.DiffResult{
		Diffs: []card.FileDiff{{Path: "new.txt", NewStart: 1, NewText: "alpha\nbeta\n"}},
	})},
	{"diff-result-folded", result(&card.DiffResult{
		Diffs: []card.FileDiff{{Path: "gen.txt", NewStart: 1, NewText: numbered(60, func(i int) string { return fmt.Sprint("generated ", i) })}},
	})},
	{"search-content", result(&card.SearchResult{
		Title: "5 matching lines in 2 files", Query: "TODO", Dir: "/work/proj", Total: 5,
		Files: []card.SearchFile{
			{Path: "internal/a.go", Count: 3, Matches: []card.SearchMatch{
				{Line: 9, Text: "func a() {"},
				{Line: 10, Text: "\t// TODO: one TODO, two", Ranges: [][2]int{{4, 8}, {14, 18}}},
				{Line: 11, Text: "}"},
				{Line: 120, Text: "TODO", Ranges: [][2]int{{0, 4}}},
				{Line: 121, Text: "x := \"TODO\" // 漢字 TODO", Ranges: [][2]int{{6, 10}, {22, 26}}},
			}},
			{Path: "b.txt", Count: 2, Matches: []card.SearchMatch{
				{Line: 1, Text: "todo TODO", Ranges: [][2]int{{5, 9}}},
				{Line: 2, Text: "TODO", Ranges: [][2]int{{0, 4}}},
			}},
		},
	})},
	{"search-hostile", result(&card.SearchResult{
		Query: "x", Dir: "/w", Total: 2, Truncated: true,
		Files: []card.SearchFile{
			{Path: "evil\x1b]8;;http://x\x1b\\name\a.go", Count: 2, Matches: []card.SearchMatch{
				{Line: 3, Text: "a\x1b[2Jx\u202e", Ranges: [][2]int{{5, 6}}},
				{Line: 4, Text: "\xff\xfex", Ranges: [][2]int{{0, 1}, {2, 3}}},
			}},
		},
	})},
	{"search-count", result(&card.SearchResult{
		Title: "7 matching lines", Query: "err", Dir: "/w", Total: 7, Truncated: true,
		Files: []card.SearchFile{{Path: "a.go", Count: 4}, {Path: "dir with space/b.go", Count: 1}},
	})},
	{"search-paths", result(&card.SearchResult{
		Title: "3 files", Query: "**/*_test.go", Dir: "/w", Total: 3,
		Paths: []string{"a_test.go", "sub/b_test.go", "/elsewhere/c_test.go"},
	})},
	{"search-empty", result(&card.SearchResult{Title: "No matches", Query: "nothing", Dir: "/w"})},
	{"markdown", func(r *Renderer) error { return r.Assistant(markdownSample) }},
	{"plan", all(
		call(&card.PlanCall{Title: "Plan: Spell color", Plan: "# Spell color\n\nReplace **colour** in `a.txt`; a line long enough that it has to wrap at forty columns.\n\n1. edit\n2. test",
			Files: []string{"a.txt", "/w/docs/b.md"}, Steps: []string{"Edit a.txt", "Run the tests"}}),
		result(&card.PlanResult{Plan: "x", Choices: []card.Choice{{ID: "accept-edits", Label: "Yes"}}, Answer: card.Answer{ID: "accept-edits", Text: "Yes"}, Mode: "accept-edits"}),
		result(&card.PlanResult{Plan: "x", Choices: []card.Choice{{ID: "keep", Label: "No"}}, Answer: card.Answer{Text: "use sed\x1b[31m instead"}}),
		result(&card.PlanResult{Plan: "x", Choices: []card.Choice{{ID: "keep", Label: "No"}}, Answer: card.Answer{ID: "keep", Text: "No"}}),
		result(&card.PlanResult{Plan: "x", Choices: []card.Choice{{ID: "keep", Label: "No"}}}),
	)},
	{"question", all(
		call(&card.QuestionCall{Title: "Which database?", Question: "Which database should the cache use?", FreeText: true,
			Choices: []card.Choice{{ID: "1", Label: "SQLite", Description: "one file, no server"}, {ID: "2", Label: "Postgres"}}}),
		result(&card.QuestionResult{Question: "q", Choices: []card.Choice{{ID: "2", Label: "Postgres"}}, Answer: card.Answer{ID: "2", Text: "Postgres"}}),
		result(&card.QuestionResult{Question: "q", Choices: []card.Choice{{ID: "2", Label: "Postgres"}}, Answer: card.Answer{Text: "neither:\nuse files"}}),
		result(&card.QuestionResult{Question: "q", Choices: []card.Choice{{ID: "2", Label: "Postgres"}}}),
	)},
	{"task", all(
		call(&card.TaskCall{Title: "Find the flags", Agent: "explore", Prompt: "Where are the command-line flags parsed? Report files and lines."}),
		func(r *Renderer) error {
			n := r.Nested()
			if err := n.Call(&card.GenericCall{Title: "Grep \"flag.Parse\"", ToolKind: card.ToolSearch}); err != nil {
				return err
			}
			if err := n.Result(&card.GenericResult{Content: []card.Content{card.Text("main.go:12")}}, nil, false); err != nil {
				return err
			}
			r.Continue()
			return nil
		},
		result(&card.TaskResult{Title: "Find the flags", Agent: "explore", Session: "s", Text: "In **main.go**, line 12.", Calls: 1, Stop: "end_turn", Tokens: 1200}),
		result(&card.TaskResult{Title: "x", Agent: "runner", Session: "s", Text: "", Calls: 2, Stop: "cancelled"}),
	)},
	{"long-output-wraps", func(r *Renderer) error {
		exit := 1
		return r.Result(&card.TerminalResult{
			Output:   "error: the flag --frobnicate is deprecated; use --frob=always instead, or set FROB=1 in the environment to keep the old behaviour\n",
			ExitCode: &exit,
		}, nil, true)
	}},
	{"conversation", all(
		func(r *Renderer) error { return r.User("Please add a renderer for the cards, and fold long bodies.") },
		func(r *Renderer) error {
			return r.Thinking("The user wants termui. I should start with the read card because it is the most involved one.")
		},
		func(r *Renderer) error {
			return r.Assistant("I'll start with the read card: a gutter, highlighting by language, and folding for long windows.\n\nThen diffs.")
		},
		func(r *Renderer) error {
			return r.Plan([]tool.PlanEntry{
				{Content: "read card", Status: "completed"},
				{Content: "diff card with a gutter of old and new line numbers", Status: "in_progress", Priority: "high"},
				{Content: "terminal card", Status: "pending"},
				{Content: "mystery", Status: "unknown"},
			})
		},
		func(r *Renderer) error { return r.Note("turn ended: end_turn") },
	)},
}

func render(t testing.TB, s scene, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.draw(New(&b, o)); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, s := range scenes {
		t.Run(s.name, func(t *testing.T) {
			var b strings.Builder
			for _, v := range variants {
				fmt.Fprintf(&b, "=== %s\n%s", v.name, render(t, s, v.opts))
			}
			path := filepath.Join("testdata", s.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("output differs from %s (run with -update after checking):\n%s", path, got)
			}
		})
	}
}

// sgr matches the only escape sequences termui may write: SGR, and OSC 8
// hyperlinks whose URI holds no control byte.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m|\x1b\\]8;;[^\x00-\x1f\x7f]*\x1b\\\\")

func TestPlainHasNoEscapes(t *testing.T) {
	for _, s := range scenes {
		for _, w := range []int{20, 40, 100} {
			if got := render(t, s, Options{Width: w}); strings.Contains(got, "\x1b") {
				t.Errorf("%s at width %d: plain output has an escape:\n%q", s.name, w, got)
			}
		}
	}
}

// TestColorOnlyStyles: colour adds SGR sequences and nothing else, so stripping them
// gives the plain output exactly, and no other escape (one a file could carry) gets through.
func TestColorOnlyStyles(t *testing.T) {
	for _, s := range scenes {
		for _, w := range []int{20, 40, 100} {
			colored := render(t, s, Options{Color: true, Width: w})
			plain := render(t, s, Options{Width: w})
			stripped := sgr.ReplaceAllString(colored, "")
			if strings.Contains(stripped, "\x1b") {
				t.Errorf("%s at width %d: an escape other than SGR:\n%q", s.name, w, stripped)
			}
			if stripped != plain {
				t.Errorf("%s at width %d: colour output without styles differs from plain:\n%s\nvs\n%s", s.name, w, stripped, plain)
			}
		}
	}
}

func TestLinesFitWidth(t *testing.T) {
	for _, s := range scenes {
		for _, w := range []int{20, 33, 40, 100} {
			for i, l := range strings.Split(render(t, s, Options{Width: w}), "\n") {
				if got := cells.StringWidth(l); got > w {
					t.Errorf("%s at width %d: line %d is %d columns: %q", s.name, w, i+1, got, l)
				}
			}
		}
	}
}

// TestGoldenPreviews renders the call cards the file tools make from their
// previews (their own goldens, made by the real tools) as the permission prompt
// shows them: an overwrite with its old text, an edit and a replace_all in
// place, a create.
func TestGoldenPreviews(t *testing.T) {
	var b strings.Builder
	for _, name := range []string{"preview_write_overwrite", "preview_edit", "preview_edit_replace_all", "preview_write_create"} {
		raw, err := os.ReadFile(filepath.Join("..", "tool", "fs", "testdata", "cards", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := card.DecodeCall(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variants {
			fmt.Fprintf(&b, "=== %s, %s\n%s", name, v.name, render(t, scene{name, call(c)}, v.opts))
		}
	}
	path := filepath.Join("testdata", "previews.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("output differs from %s (run with -update after checking):\n%s", path, b.String())
	}
}
