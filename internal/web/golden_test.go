package web

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2025, 3, 14, 9, 30, 12, 0, time.UTC)

func toolRecs(callID, name string, res *tool.Result) (session.Record, session.Record) {
	call := session.Record{Type: session.TypeToolCall, Time: t0, CallID: callID, Name: name, Args: []byte(`{}`)}
	if res == nil {
		return call, session.Record{}
	}
	return call, session.Record{Type: session.TypeToolResult, Time: t0, CallID: callID, Result: res}
}

// goldenCase is one item rendered on its own, as the event stream sends it.
type goldenCase struct {
	name     string
	call     session.Record // the call a result answers
	item     view.Item
	progress string // output so far of a running call
}

func cardCase(name, callID, toolName string, c card.Call, r card.Result, res *tool.Result) goldenCase {
	call, result := toolRecs(callID, toolName, res)
	it := view.Item{Record: call, Call: c}
	if res != nil {
		it = view.Item{Record: result, Call: c, Result: r}
	}
	return goldenCase{name: name, call: call, item: it}
}

func numbered(from int, lines ...string) []card.ReadLine {
	out := make([]card.ReadLine, len(lines))
	for i, l := range lines {
		out[i] = card.ReadLine{Number: from + i, Text: l}
	}
	return out
}

func goldenCases() []goldenCase {
	ok := &tool.Result{Content: []card.Content{card.Text("ok")}}
	many := make([]string, 75)
	for i := range many {
		many[i] = fmt.Sprintf("line %d", i+1)
	}
	oldEdit := "def greet(name):\n    return \"Hello \" + name\n\n"
	return []goldenCase{
		cardCase("generic", "call_g", "job_list",
			&card.GenericCall{Title: "Background jobs", ToolKind: "other", RawInput: []byte(`{"all":true,"filter":"<b>"}`),
				Locations: []card.Location{{Path: "a/b.go", Line: card.Ptr(12)}, {Path: "c.txt"}},
				Content:   []card.Content{card.Text("why: <check>"), card.Image("image/png", "iVBORw0KGgo="), card.Image("image/svg+xml", "PHN2Zz4=")}},
			&card.GenericResult{Title: "2 jobs", Content: []card.Content{card.Text("job-1  running\njob-2  done")}}, ok),
		cardCase("terminal-ok", "call_t", "bash",
			&card.TerminalCall{Title: "go test ./... | tail -n 3", Description: "run the tests", Cwd: "internal/web"},
			&card.TerminalResult{Output: "ok  \tpkg\t0.1s\n<html> & \"quotes\"\n", ExitCode: card.Ptr(0)}, ok),
		cardCase("terminal-fail-timeout", "call_t", "bash",
			&card.TerminalCall{Title: "sleep 100"},
			&card.TerminalResult{Output: "", ExitCode: card.Ptr(124), TimedOut: true}, ok),
		cardCase("terminal-sandbox-refused", "call_t", "bash",
			&card.TerminalCall{Title: "echo x > /etc/x"},
			&card.TerminalResult{Output: "bash: /etc/x: Permission denied\n", ExitCode: card.Ptr(1),
				Sandbox: &card.Sandbox{Refused: "bash: /etc/x: <Permission> denied"}}, ok),
		cardCase("terminal-signal", "call_t", "bash",
			&card.TerminalCall{Title: "yes"},
			&card.TerminalResult{Output: strings.Repeat("y\n", 60), Signal: "SIGKILL"}, ok),
		// Only the start and end of 10,000 lines were kept: 9,970 are hidden.
		cardCase("terminal-kept", "call_t", "bash",
			&card.TerminalCall{Title: "seq 1 10000"},
			&card.TerminalResult{Output: strings.Repeat("n\n", 60), Lines: 10000, ExitCode: card.Ptr(0)}, ok),
		cardCase("read", "call_r", "read",
			&card.GenericCall{Title: "Read greet.py", ToolKind: "read", Locations: []card.Location{{Path: "greet.py", Line: card.Ptr(10)}}},
			&card.ReadResult{Path: "greet.py", Offset: 10, TotalLines: 40, Lang: "python",
				Lines: numbered(10, "def f():", "    return \"</pre><script>alert(1)</script>\"", "\t# tab")}, ok),
		cardCase("read-folded", "call_r", "read",
			&card.GenericCall{Title: "Read notes.txt", ToolKind: "read"},
			&card.ReadResult{Path: "notes.txt", Offset: 1, TotalLines: 75, Lines: numbered(1, many...)}, ok),
		cardCase("read-empty-window", "call_r", "read",
			&card.GenericCall{Title: "Read big.min.js", ToolKind: "read"},
			&card.ReadResult{Path: "big.min.js", Offset: 3, TotalLines: 9, Lang: "javascript", Lines: []card.ReadLine{}}, ok),
		cardCase("diff-call", "call_d", "edit",
			&card.DiffCall{Title: "Edit greet.py", Diffs: []card.FileDiff{{Path: "greet.py", OldText: card.Ptr("    return \"Hello \" + name\n"), NewText: "    return f\"Hello, {name}!\"\n"}}},
			nil, nil),
		cardCase("diff-edit", "call_d", "edit",
			&card.DiffCall{Title: "Edit greet.py", Diffs: []card.FileDiff{{Path: "greet.py", OldText: card.Ptr("Hello"), NewText: "Hi"}}},
			&card.DiffResult{Title: "Edited greet.py (2 sites)", Diffs: []card.FileDiff{
				{Path: "greet.py", OldText: card.Ptr(oldEdit), NewText: "def greet(name):\n    return f\"Hello, {name}!\"\n\n", OldStart: 3, NewStart: 3},
				{Path: "greet.py", OldText: card.Ptr("x = 1\ny = 2\n"), NewText: "x = 1\n", OldStart: 40, NewStart: 40},
			}, Diagnostics: []card.Diagnostic{
				{Path: "greet.py", Line: 4, Column: 12, Severity: card.SeverityError, Message: "\"<name>\" is not defined", Source: "Pyright"},
				{Path: "greet.py", Line: 40, Column: 1, Severity: card.SeverityWarning, Message: "unused"},
			}}, ok),
		cardCase("diff-create", "call_w", "write",
			&card.DiffCall{Title: "Write CHANGELOG.md", Diffs: []card.FileDiff{{Path: "CHANGELOG.md", NewText: "# Changelog\n\n- <b>bold</b>\n"}}},
			&card.DiffResult{Title: "Create CHANGELOG.md", Diffs: []card.FileDiff{{Path: "CHANGELOG.md", NewText: "# Changelog\n\n- <b>bold</b>\n", NewStart: 1}}}, ok),
		cardCase("search", "call_s", "grep",
			&card.GenericCall{Title: "Grep \"greet\"", ToolKind: "search"},
			&card.SearchResult{Title: "3 matching lines in 2 files", Query: "greet", Dir: "/w", Total: 3, Files: []card.SearchFile{
				{Path: "greet.py", Count: 2, Matches: []card.SearchMatch{
					{Line: 1, Text: "def greet(name): # <script>greet</script>", Ranges: [][2]int{{4, 9}, {27, 32}}},
					{Line: 2, Text: "    return name"},
					{Line: 9, Text: "greet(\"x\")", Ranges: [][2]int{{0, 5}}}}},
				{Path: "<b>odd</b>.md", Count: 1, Matches: []card.SearchMatch{{Line: 4, Text: "greet", Ranges: [][2]int{{0, 5}}}}},
			}}, ok),
		cardCase("search-paths", "call_s", "glob",
			&card.GenericCall{Title: "Glob **/*.py", ToolKind: "search"},
			&card.SearchResult{Title: "2 files", Query: "**/*.py", Dir: "/w", Total: 5, Truncated: true,
				Paths: []string{"greet.py", "sub/<i>x</i>.py"}}, ok),
		cardCase("search-count", "call_s", "grep",
			&card.GenericCall{Title: "Grep \"x\" (count)", ToolKind: "search"},
			&card.SearchResult{Title: "4 matching lines", Query: "x", Dir: "/w", Total: 4,
				Files: []card.SearchFile{{Path: "a.py", Count: 3}, {Path: "b.py", Count: 1}}}, ok),
		cardCase("plan", "call_p", "plan",
			&card.PlanCall{Title: "Plan: Spell color", Plan: "# Spell color\n\nReplace **colour** in `a.txt`.\n\n<script>alert(1)</script>",
				Files: []string{"a.txt", "<b>x</b>.md"}, Steps: []string{"Edit a.txt", "Run <the> tests"}},
			&card.PlanResult{Plan: "x", Choices: []card.Choice{{ID: "accept-edits", Label: "Yes"}}, Answer: card.Answer{ID: "accept-edits", Text: "Yes"}, Mode: "accept-edits"}, ok),
		cardCase("plan-keep", "call_p", "plan",
			&card.PlanCall{Title: "Plan", Plan: "Do it."},
			&card.PlanResult{Plan: "Do it.", Choices: []card.Choice{{ID: "keep", Label: "No"}}, Answer: card.Answer{Text: "use <sed>\ninstead"}}, ok),
		cardCase("question", "call_q", "ask_user",
			&card.QuestionCall{Title: "Which database?", Question: "Which <database>?", FreeText: true,
				Choices: []card.Choice{{ID: "1", Label: "SQLite", Description: "one <file>"}, {ID: "2", Label: "Postgres"}}},
			&card.QuestionResult{Question: "Which <database>?", Choices: []card.Choice{{ID: "1", Label: "SQLite"}, {ID: "2", Label: "Postgres"}},
				Answer: card.Answer{ID: "2", Text: "Postgres"}}, ok),
		cardCase("question-none", "call_q", "ask_user",
			&card.QuestionCall{Title: "Which?", Question: "Which?", Choices: []card.Choice{{ID: "1", Label: "A"}, {ID: "2", Label: "B"}}},
			&card.QuestionResult{Question: "Which?", Choices: []card.Choice{{ID: "1", Label: "A"}, {ID: "2", Label: "B"}}}, ok),
		cardCase("raw-error", "call_x", "read",
			&card.GenericCall{Title: "Read missing.txt", ToolKind: "read"},
			nil, &tool.Result{Content: []card.Content{card.Text("File not found: missing.txt")}, IsError: true}),
		{name: "running", item: view.Item{Record: session.Record{Type: session.TypeToolCall, Time: t0, CallID: "toolu 01/x", Name: "bash"},
			Call: &card.TerminalCall{Title: "make"}}, progress: strings.Repeat("building…\n", 45) + "<done>"},
		{name: "user", item: view.Item{Record: session.Record{Type: session.TypeUser, Time: t0,
			Text: "Please fix `greet.py`:\n\n<script>alert(1)</script>\n\n[docs](https://example.com) and [bad](javascript:alert(2))"}}},
		{name: "assistant", item: view.Item{Record: session.Record{Type: session.TypeAssistant, Time: t0,
			Text: "Done.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfmt.Println(\"<hi>\")\n```\n<img src=x onerror=alert(3)>"}}},
		{name: "user-attachments", item: view.Item{Record: session.Record{Type: session.TypeUser, Time: t0,
			Text: "Why does @main.go fail? The log: [paste #1: 3 lines, 30 bytes] and the screen:",
			Content: []card.Content{
				{Type: card.ContentPaste, Text: "line <1>\n  indented 2\nline 3\n"},
				{Type: card.ContentResource, URI: "main.go", Text: "package main\n\nfunc main() {}\n"},
				{Type: card.ContentImage, URI: "shot.png", MimeType: "image/png", Data: "iVBORw0KGgo="},
				{Type: card.ContentImage, URI: "evil.svg", MimeType: "image/svg+xml", Data: "PHN2Zz4="},
			}}}},
		{name: "user-long", item: view.Item{Record: session.Record{Type: session.TypeUser, Time: t0,
			Text: "A long paste:\n\n" + strings.Repeat("- item\n", 45)}}},
		{name: "thinking", item: view.Item{Record: session.Record{Type: session.TypeThinking, Time: t0, Text: "Read *first*."}}},
		{name: "turn-end-max-tokens", item: view.Item{Record: session.Record{Type: session.TypeTurnEnd, Time: t0, StopReason: "max_tokens"}}},
		{name: "turn-end-done", item: view.Item{Record: session.Record{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn",
			Usage: &session.Usage{}}}},
		{name: "turn-end", item: view.Item{Record: session.Record{Type: session.TypeTurnEnd, Time: t0, StopReason: "error",
			Error: "provider: 529 <overloaded>", Usage: &session.Usage{InputTokens: 10, OutputTokens: 2}}}},
		{name: "checkpoint", item: view.Item{Record: session.Record{Type: session.TypeCheckpoint, Time: t0,
			Checkpoint: &session.Checkpoint{Prompt: 2, Phase: session.PhaseBefore, Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}}}},
		{name: "checkpoint-none", item: view.Item{Record: session.Record{Type: session.TypeCheckpoint, Time: t0,
			Checkpoint: &session.Checkpoint{Prompt: 3, Phase: session.PhaseBefore, Note: "git is not installed: <no undo>"}}}},
		restoreCase(),
		hookCase(),
		signInCase(),
	}
}

// signInCase is a sign-in to an MCP server waiting for the user: the link
// to open (a hostile server name is escaped).
func signInCase() goldenCase {
	r := session.Record{Type: session.TypeReply, Time: t0, Text: "MCP server <docs> needs you to sign in",
		SignIn: &session.SignIn{Server: "<docs>", State: session.SignInWaiting, URL: "http://127.0.0.1:8123/authorize?client_id=dsh&state=a<b"}}
	return goldenCase{name: "signin", item: view.NewPresenter(toolset.New(toolset.Options{})).Present(r)}
}

// hookCase is a hook's run as the page draws it: a small finished call (a
// hostile command and output are escaped).
func hookCase() goldenCase {
	r := session.Record{Type: session.TypeHook, Time: t0, Hook: &session.Hook{Event: "PreToolUse", Matcher: "Bash",
		Command: ".claude/hooks/<block-rm>.sh", Tool: "Bash", Call: "c1", ExitCode: 2, Decision: "deny",
		Reason: "rm is not allowed", Output: "rm is not allowed\n<script>alert(1)</script>"}}
	return goldenCase{name: "hook", item: view.NewPresenter(toolset.New(toolset.Options{})).Present(r)}
}

// restoreCase is an undo as the page draws it: the diff it applied.
func restoreCase() goldenCase {
	old, now := "colour\n", "color\n"
	r := session.Record{Type: session.TypeRestore, Time: t0, Restore: &session.Restore{To: 1, Prompt: 1, Before: "b", After: "a",
		Files: []session.RestoredFile{{Path: "a.txt", OldText: &now, NewText: &old, Added: 1, Removed: 1}, {Path: "gen.txt", OldText: &now, Removed: 1}},
		Kept:  []string{"keep.txt"}}}
	return goldenCase{name: "restore", item: view.NewPresenter(toolset.New(toolset.Options{})).Present(r)}
}

func testBuilder(t *testing.T) *builder {
	t.Helper()
	s, err := New(Options{Dir: t.TempDir(), Token: testToken, Registry: toolset.New(toolset.Options{}), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	return s.newBuilder("20250314-093012-abcdefgh", false)
}

// TestGoldenCards renders every card kind, messages and a running call
// as the event stream sends them, and compares with testdata/*.html.
func TestGoldenCards(t *testing.T) {
	kinds := map[string]bool{}
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := testBuilder(t)
			it := b.item(tc.item, cmp.Or(tc.call.Name, tc.item.Record.Name))
			if tc.progress != "" {
				it.Tool.Progress = b.progressBody(tc.progress)
			}
			if it.End != nil { // as the stream does: the turn's usage is the fold's
				var f usage.Fold
				f.Record(tc.item.Record)
				it.End.Usage.Totals = f.LastTurn()
			}
			var out bytes.Buffer
			writeItem(&out, it)
			out.WriteByte('\n')
			for _, k := range dataCards(out.String()) {
				kinds[k] = true
			}
			golden(t, filepath.Join("testdata", tc.name+".html"), out.Bytes())
		})
	}
	for _, k := range []string{"generic-call", "terminal-call", "diff-call", "generic-result", "terminal-result",
		"read-result", "diff-result", "search-result", "raw-result", "plan-call", "plan-result", "question-call", "question-result"} {
		if !kinds[k] {
			t.Errorf("no golden shows a %s card", k)
		}
	}
}

// dataCards lists the data-card attributes in html.
func dataCards(html string) []string {
	var out []string
	for _, part := range strings.Split(html, `data-card="`)[1:] {
		out = append(out, part[:strings.IndexByte(part, '"')])
	}
	return out
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestGoldenPreviews renders the call cards of a write and an edit as the file
// tools preview them before the permission step (their own goldens, made by the
// real tools), as the page shows a call waiting for approval: an overwrite with
// its old text, an edit and a replace_all in place, a create.
func TestGoldenPreviews(t *testing.T) {
	for _, name := range []string{"preview_write_overwrite", "preview_edit", "preview_edit_replace_all", "preview_write_create"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "tool", "fs", "testdata", "cards", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := card.DecodeCall(raw)
			if err != nil {
				t.Fatal(err)
			}
			tc := cardCase(name, "call_p", "edit", c, nil, nil)
			b := testBuilder(t)
			var out bytes.Buffer
			writeItem(&out, b.item(tc.item, "edit"))
			out.WriteByte('\n')
			if !strings.Contains(out.String(), `data-card="diff-call"`) {
				t.Errorf("no diff call card in\n%s", out.String())
			}
			golden(t, filepath.Join("testdata", name+".html"), out.Bytes())
		})
	}
}
