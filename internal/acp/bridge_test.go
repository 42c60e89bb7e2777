package acp

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
)

func TestFence(t *testing.T) {
	for _, tc := range []struct{ in, lang, want string }{
		{"x := 1", "go", "```go\nx := 1\n```"},
		{"line\n", "", "```\nline\n```"},
		{"a ``` b", "markdown", "````markdown\na ``` b\n````"},
		{"````\n`", "", "`````\n````\n`\n`````"},
		{"`", "console", "```console\n`\n```"},
		{"``x````y`z```", "", "`````\n``x````y`z```\n`````"},
	} {
		if got := fence(tc.in, tc.lang); got != tc.want {
			t.Errorf("fence(%q, %q) = %q, want %q", tc.in, tc.lang, got, tc.want)
		}
	}
}

func TestPromptText(t *testing.T) {
	text := func(s string) sdk.ContentBlock { return sdk.TextBlock(s) }
	for _, tc := range []struct {
		name    string
		in      []sdk.ContentBlock
		want    string
		wantErr string
	}{
		{"text", []sdk.ContentBlock{text("Fix "), text("the bug.")}, "Fix the bug.", ""},
		{"link", []sdk.ContentBlock{text("Read "), sdk.ResourceLinkBlock("main.go", "file:///src/main.go")},
			"Read [@main.go](file:///src/main.go)", ""},
		{"MCP link", []sdk.ContentBlock{text("Read "), sdk.ResourceLinkBlock("doc.md", "demo://doc.md"), text(" now")},
			"Read @everything:demo://doc.md now", ""},
		{"MCP links apart", []sdk.ContentBlock{text("Read"), sdk.ResourceLinkBlock("doc.md", "demo://doc.md"),
			sdk.ResourceLinkBlock("main.go", "file:///src/main.go"), text(", please")},
			"Read @everything:demo://doc.md [@main.go](file:///src/main.go), please", ""},
		{"embedded", []sdk.ContentBlock{text("Explain "), sdk.ResourceBlock(sdk.EmbeddedResourceResource{
			TextResourceContents: &sdk.TextResourceContents{Uri: "file:///src/a.go", Text: "package a\n"}})},
			"Explain [@a.go](file:///src/a.go)", ""},
		{"image", []sdk.ContentBlock{text("Look"), sdk.ImageBlock("AAAA", "image/png")}, "Look", ""},
		{"image only", []sdk.ContentBlock{sdk.ImageBlock("AAAA", "image/png")}, "", ""},
		{"not an image", []sdk.ContentBlock{text("Look"), sdk.ImageBlock("AAAA", "text/plain")}, "", "not an image"},
		{"bad base64", []sdk.ContentBlock{text("Look"), sdk.ImageBlock("%%%", "image/png")}, "", "base64"},
		{"no data", []sdk.ContentBlock{text("Look"), sdk.ImageBlock("", "image/png")}, "", "no data"},
		{"audio", []sdk.ContentBlock{text("Hear"), {Audio: &sdk.ContentBlockAudio{Data: "AAAA", MimeType: "audio/wav", Type: "audio"}}}, "", "audio"},
		{"empty", []sdk.ContentBlock{text("  ")}, "", "empty"},
	} {
		got, _, err := promptText(tc.in, func() map[string]string {
			return map[string]string{"demo://doc.md": "@everything:demo://doc.md"}
		})
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one about %q", tc.name, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// bridgeFor is a bridge over the real tools, as sessions use it.
func bridgeFor(termMeta bool) *bridge {
	return newBridge("/work", termMeta, view.NewPresenter(toolset.New(toolset.Options{})))
}

func encode(t *testing.T, u sdk.SessionUpdate) string {
	t.Helper()
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rec(typ session.RecordType, id string) session.Record {
	return session.Record{Type: typ, CallID: id}
}

// terminalCall runs a foreground bash call through a bridge: the call, the
// output chunks, then the result with the given output and exit status.
func terminalCall(t *testing.T, b *bridge, chunks []string, res tool.Result) []string {
	t.Helper()
	call := rec(session.TypeToolCall, "c1")
	call.Name, call.Args = "bash", jsontext.Value(`{"command":"make"}`)
	var out []string
	for _, u := range b.updates(call, false) {
		out = append(out, encode(t, u))
	}
	for _, c := range chunks {
		p := rec(session.TypeProgress, "c1")
		p.Chunk = c
		for _, u := range b.updates(p, false) {
			out = append(out, encode(t, u))
		}
	}
	r := rec(session.TypeToolResult, "c1")
	r.Result = &res
	for _, u := range b.updates(r, false) {
		out = append(out, encode(t, u))
	}
	return out
}

func bashResult(output string, exit *int, signal string, isErr bool) tool.Result {
	m := map[string]any{"cwd": ".", "outputLength": len(output)}
	if exit != nil {
		m["exitCode"] = *exit
	}
	if signal != "" {
		m["signal"] = signal
	}
	meta, _ := json.Marshal(m)
	return tool.Result{Content: []card.Content{card.Text(output + "notes for the model")}, IsError: isErr, Meta: meta}
}

func TestTerminalWithMeta(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunks   []string
		res      tool.Result
		wantLast []string // substrings of the final update
		notLast  []string
	}{
		{"streamed whole", []string{"a\n", "b\n"}, bashResult("a\nb\n", card.Ptr(0), "", false),
			[]string{`"terminal_exit":{"exit_code":0,"signal":null,"terminal_id":"c1"}`, `"status":"completed"`},
			[]string{`terminal_output`, `"content"`}},
		{"rest sent at the end", []string{"a\n"}, bashResult("a\nb\n", card.Ptr(2), "", true),
			[]string{`"terminal_output":{"data":"b\n","terminal_id":"c1"}`, `"exit_code":2`, `"status":"failed"`}, nil},
		{"nothing streamed", nil, bashResult("all\n", card.Ptr(0), "", false),
			[]string{`"terminal_output":{"data":"all\n","terminal_id":"c1"}`}, nil},
		{"coalesced live view", []string{"a\n…\nz\n"}, bashResult("a\nb\nz\n", card.Ptr(0), "", false),
			[]string{`"terminal_exit"`}, []string{`terminal_output`}},
		{"killed", nil, bashResult("", nil, "SIGKILL", true),
			[]string{`"exit_code":null,"signal":"SIGKILL"`}, []string{`terminal_output`}},
		{"cancelled", []string{"started\n"}, tool.Errorf("Cancelled by the user."),
			[]string{`"exit_code":null,"signal":null`, `{"terminalId":"c1","type":"terminal"}`, `Cancelled by the user.`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := terminalCall(t, bridgeFor(true), tc.chunks, tc.res)
			if !strings.Contains(out[0], `"terminal_info":{"cwd":"/work","terminal_id":"c1"}`) {
				t.Errorf("the tool_call has no terminal_info: %s", out[0])
			}
			last := out[len(out)-1]
			for _, s := range tc.wantLast {
				if !strings.Contains(last, s) {
					t.Errorf("the final update lacks %s:\n%s", s, last)
				}
			}
			for _, s := range tc.notLast {
				if strings.Contains(last, s) {
					t.Errorf("the final update has %s:\n%s", s, last)
				}
			}
		})
	}
}

func TestTerminalFallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  tool.Result
		want string // the text of the final content
	}{
		{"ok", bashResult("done\n", card.Ptr(0), "", false), "```console\ndone\n```"},
		{"failing", bashResult("no\n", card.Ptr(1), "", true), "```console\nno\n```Exit code 1."},
		{"signal", bashResult("", nil, "SIGTERM", true), "Killed by SIGTERM."},
		{"backticks in output", bashResult("```\n", card.Ptr(0), "", false), "````console\n```\n````"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bridgeFor(false)
			out := terminalCall(t, b, nil, tc.res)
			var u struct {
				Content []struct {
					Content struct{ Text string } `json:"content"`
				} `json:"content"`
			}
			if err := json.Unmarshal([]byte(out[len(out)-1]), &u); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, c := range u.Content {
				got.WriteString(c.Content.Text)
			}
			if got.String() != tc.want {
				t.Errorf("content %q, want %q", got.String(), tc.want)
			}
			if strings.Contains(strings.Join(out, "\n"), "terminal_") {
				t.Errorf("terminal meta sent to a client without it:\n%s", strings.Join(out, "\n"))
			}
		})
	}
}

// The fallback block shows the output so far, cut to its tail when long.
func TestFallbackRefresh(t *testing.T) {
	b := bridgeFor(false)
	terminalCallStart(t, b)
	long := strings.Repeat("x", fallbackTail) + "é" + "tail\n"
	p := rec(session.TypeProgress, "c1")
	p.Chunk = long
	b.updates(p, false)
	u, ok := b.refresh("c1")
	if !ok {
		t.Fatal("no refresh for a running command with output")
	}
	s := encode(t, u)
	if !strings.Contains(s, `tail\n`) || !strings.Contains(s, "…") || len(s) > fallbackTail+500 {
		t.Errorf("the refresh is not the tail of the output (%d bytes)", len(s))
	}
	if _, ok := bridgeFor(true).refresh("c1"); ok {
		t.Error("a refresh for a client with terminal meta")
	}
}

func terminalCallStart(t *testing.T, b *bridge) {
	call := rec(session.TypeToolCall, "c1")
	call.Name, call.Args = "bash", jsontext.Value(`{"command":"make"}`)
	b.updates(call, false)
}

// Text streamed while the model wrote it is not sent again by its record.
func TestUnstreamed(t *testing.T) {
	b := bridgeFor(false)
	b.delta(provider.Delta{Type: provider.DeltaText, Text: "Hello, "})
	b.delta(provider.Delta{Type: provider.DeltaText, Text: "world. More"})
	for _, tc := range []struct{ record, want string }{
		{"Hello, world.", ""},     // a prefix of what was streamed
		{" More text.", " text."}, // the rest, and more
		{"Something else", "Something else"},
	} {
		r := session.Record{Type: session.TypeAssistant, Text: tc.record}
		var got string
		for _, u := range b.updates(r, false) {
			got += u.AgentMessageChunk.Content.Text.Text
		}
		if got != tc.want {
			t.Errorf("record %q sent %q, want %q", tc.record, got, tc.want)
		}
	}
}

func TestLocationsAreAbsolute(t *testing.T) {
	b := bridgeFor(false)
	r := rec(session.TypeToolCall, "r1")
	r.Name, r.Args = "read", jsontext.Value(`{"path":"src/../main.go","offset":3}`)
	u := b.updates(r, false)[0]
	if l := u.ToolCall.Locations; len(l) != 1 || l[0].Path != "/work/main.go" || l[0].Line == nil || *l[0].Line != 3 {
		t.Errorf("locations %s", encode(t, u))
	}
	if got := toolKind("nonsense"); got != sdk.ToolKindOther {
		t.Errorf("an unknown kind maps to %q", got)
	}
}

// searchCall runs a search call and its result (meta as the tool logs it)
// through a bridge and returns every update, encoded.
func searchCall(t *testing.T, name, args, text, meta string) []string {
	t.Helper()
	b := bridgeFor(false)
	call := rec(session.TypeToolCall, "s1")
	call.Name, call.Args = name, jsontext.Value(args)
	var out []string
	for _, u := range b.updates(call, false) {
		out = append(out, encode(t, u))
	}
	r := rec(session.TypeToolResult, "s1")
	r.Result = &tool.Result{Content: []card.Content{card.Text(text)}, Meta: jsontext.Value(meta)}
	for _, u := range b.updates(r, false) {
		out = append(out, encode(t, u))
	}
	return out
}

// TestSearchCard: a search result sends its matches as absolute locations, a
// fenced ripgrep-style body and the card under _meta.dsh.card; damaged meta
// sends the raw text and nothing else.
func TestSearchCard(t *testing.T) {
	var got []string
	got = append(got, searchCall(t, "grep", `{"pattern":"greet","path":"src"}`, "src/a.py\n1:def greet():\n",
		`{"query":"greet","dir":"/work","files":[{"path":"src/a.py","count":2,"matches":[`+
			`{"line":1,"text":"def greet():","ranges":[[4,9]]},{"line":2,"text":"  pass"},{"line":7,"text":"greet() # `+"```"+`","ranges":[[0,5]]}]},`+
			`{"path":"/abs/b.py","count":1,"matches":[{"line":3,"text":"greet","ranges":[[0,5]]}]}],"total":4,"truncated":true}`)...)
	got = append(got, searchCall(t, "glob", `{"pattern":"**/*.py"}`, "a.py\n",
		`{"query":"**/*.py","dir":"/work","paths":["a.py","sub/b.py"],"total":2}`)...)
	damaged := searchCall(t, "grep", `{"pattern":"x"}`, "a.py\n1:x\n",
		`{"query":"x","dir":"/work","files":[{"path":"a.py","count":1,"matches":[{"line":1,"text":"x","ranges":[[0,2]]}]}],"total":1}`)
	got = append(got, damaged...)
	bridgeGolden(t, "search", got)

	last := damaged[len(damaged)-1]
	if strings.Contains(last, `"dsh"`) || strings.Contains(last, `"locations"`) || !strings.Contains(last, `1:x`) {
		t.Errorf("damaged meta did not fall back to the raw content: %s", last)
	}
	var u struct {
		Locations []struct {
			Path string `json:"path"`
			Line *int   `json:"line"`
		} `json:"locations"`
		Meta struct {
			Dsh struct {
				Card json.RawMessage `json:"card"`
			} `json:"dsh"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(got[1]), &u); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, l := range u.Locations {
		s := l.Path
		if l.Line != nil {
			s += ":" + itoa(*l.Line)
		}
		locs = append(locs, s)
	}
	if want := "/work/src/a.py:1 /work/src/a.py:7 /abs/b.py:3"; strings.Join(locs, " ") != want {
		t.Errorf("locations %v, want %s (matches only, absolute)", locs, want)
	}
	if c, err := card.DecodeResult(u.Meta.Dsh.Card); err != nil || c.Kind() != card.KindSearch {
		t.Errorf("_meta.dsh.card does not decode as a search card: %v %s", err, u.Meta.Dsh.Card)
	}
}

// bridgeGolden compares lines with testdata/NAME.golden.jsonl; -update (the flag
// the package's external tests define, in the same test binary) rewrites it.
func bridgeGolden(t *testing.T, name string, got []string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.jsonl")
	text := strings.Join(got, "\n") + "\n"
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if text != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, text)
	}
}

// Another client's answer to a call is said in the editor, as the terminal
// and the web page say it; the editor's own answer is not repeated.
func TestDecisionFromAnotherClient(t *testing.T) {
	for _, tc := range []struct {
		from, want string
	}{
		{"web", "allowed once from web"},
		{"attach", "allowed once from attach"},
		{"editor", ""},
		{"", ""},
	} {
		b := bridgeFor(false)
		r := session.Record{Type: session.TypeDecision, CallID: "c1", Decision: session.DecisionAllow, From: tc.from}
		got := ""
		for _, u := range b.updates(r, false) {
			if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
				got += u.AgentMessageChunk.Content.Text.Text
			}
		}
		if got != tc.want {
			t.Errorf("a decision from %q showed %q, want %q", tc.from, got, tc.want)
		}
	}
}
