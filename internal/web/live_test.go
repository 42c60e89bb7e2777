package web

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// everyRecord is a session with a record of every type (a damaged line as a
// lenient reader hands it out), a finished call with live output and a call
// still running.
func everyRecord() []session.Record {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return []session.Record{
		{Type: session.TypeHeader, Time: t0, Version: 1, SessionID: sid, Cwd: "/src"},
		{Type: session.TypeModel, Time: t0, Model: "claude-sonnet-4-5"},
		{Type: session.TypeMode, Time: t0, Mode: "accept-edits"},
		{Type: session.TypeUser, Time: t0, Text: "explain @main.go and [paste #1: 2 lines, 4 bytes]",
			Content: []card.Content{card.Paste("a\nb\n"), card.Resource("main.go", "package main\n")}},
		{Type: session.TypeThinking, Time: t0, Text: "let me look"},
		{Type: session.TypeAssistant, Time: t0, Text: "Running **it**."},
		{Type: session.TypeToolCall, Time: t0, CallID: "c1", Name: "bash", Args: jsontext.Value(`{"command":"echo hi"}`)},
		{Type: session.TypeProgress, Time: t0, CallID: "c1", Chunk: "hi <b>\n"},
		{Type: session.TypeToolResult, Time: t0, CallID: "c1", Result: &tool.Result{Content: []card.Content{card.Text("hi <b>\n")},
			Meta: jsontext.Value(`{"exitCode":0}`)}},
		{Type: session.TypeAllow, Time: t0, Keys: []string{"bash:echo"}},
		{Type: session.TypePlan, Time: t0, Plan: []tool.PlanEntry{{Content: "read it", Status: "in_progress"}}},
		{Type: session.TypeInstructions, Time: t0, Path: "sub/AGENTS.md", Text: "use tabs"},
		{Type: session.TypeCompaction, Time: t0, Text: "what was done", Keep: 1, Focus: "tests",
			Usage: &session.Usage{InputTokens: 5000, OutputTokens: 300, Calls: []session.CallUsage{{Model: "claude-sonnet-4-5", InputTokens: 5000, OutputTokens: 300}}}},
		{Type: session.TypeDamaged, Time: t0, Error: "line 14: not JSON"},
		{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 6000, OutputTokens: 400,
			Calls: []session.CallUsage{{Model: "claude-sonnet-4-5", InputTokens: 1000, OutputTokens: 100}}}},
		{Type: session.TypeUser, Time: t0, Text: "and now?"},
		{Type: session.TypeToolCall, Time: t0, CallID: "c2", Name: "bash", Args: jsontext.Value(`{"command":"sleep 9"}`)},
		{Type: session.TypeProgress, Time: t0, CallID: "c2", Chunk: "still <going>"},
	}
}

// TestLiveEqualsReload: for every split k of a session with every record type,
// the page served with the first k records and then following the stream shows
// what a page served with all of them shows, the session's totals included.
func TestLiveEqualsReload(t *testing.T) {
	recs := everyRecord()
	s := testBuilder(t).s
	want := pageItems(t, s, recs)
	for k := range len(recs) + 1 {
		got := pageItems(t, s, recs[:k])
		st := s.newStream(sid, k)
		for _, r := range recs {
			for _, e := range st.next(r) {
				got = apply(t, got, e.name, string(e.data))
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("page of %d records + the stream differs from the page of %d:\n%s\n--- reload\n%s",
				k, len(recs), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	all := strings.Join(want, "\n")
	for _, shown := range []string{`data-item="context"`, "Project instructions: sub/AGENTS.md", "Compacted the conversation",
		"attached main.go (1 line)", "[paste: 2 lines]", `data-item="note"`, "still &lt;going&gt;",
		// The compaction and the call at sonnet's $3 and $15 a million tokens.
		`<span id="usage" class="usage"> · 6000 tokens in, 400 out · $0.0240</span>`, "done · 6000 tokens in, 400 out · $0.0240"} {
		if !strings.Contains(all, shown) {
			t.Errorf("the page lacks %q", shown)
		}
	}
	if strings.Contains(all, "package main") {
		t.Error("an attached file's text is shown on the page, not its chip")
	}
}

// pageItems renders the session's totals and the items of the page of recs.
func pageItems(t *testing.T, s *Server, recs []session.Record) []string {
	t.Helper()
	pg := s.sessionPage(sid, recs, true)
	var u strings.Builder
	out{&u}.usage(pg.Usage)
	items := []string{u.String()}
	for it := range pg.Items {
		var b strings.Builder
		out{&b}.item(it)
		items = append(items, b.String())
	}
	return items
}

var (
	elemID   = regexp.MustCompile(`^<[a-z]+ (?:class="[^"]*" )?id="[^"]+"`)
	chunkOf  = regexp.MustCompile(`^<pre data-call="([^"]+)">((?s).*)</pre>$`)
	progress = `<pre class="progress">`
)

// apply does to items what the page's script does with an event.
func apply(t *testing.T, items []string, event, data string) []string {
	t.Helper()
	switch event {
	case "":
		return items
	case "item":
		if m := elemID.FindStringSubmatch(data); m != nil {
			for i, it := range items {
				if strings.HasPrefix(it, m[0]) {
					items[i] = data
					return items
				}
			}
		}
		return append(items, data)
	case "progress":
		m := chunkOf.FindStringSubmatch(data)
		if m == nil {
			t.Fatalf("progress fragment %q", data)
		}
		head := `<article class="item tool" id="` + m[1] + `"`
		for i, it := range items {
			if j := strings.Index(it, progress); strings.HasPrefix(it, head) && j >= 0 {
				end := j + len(progress) + strings.Index(it[j+len(progress):], "</pre>")
				text := html.EscapeString(html.UnescapeString(m[2]))
				items[i] = it[:end] + text + it[end:]
			}
		}
		return items
	}
	t.Fatalf("unknown event %q", event)
	return nil
}
