package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// shown describes messages with the compaction preamble shortened to
// "[summary] ", so a whole conversation can be compared at a glance.
func shown(ms []provider.Message) []string {
	pre := summaryText(session.Record{})
	out := describe(ms)
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], pre, "[summary] ")
	}
	return out
}

// lastText is the text of the last part of a request's last message.
func lastText(req provider.Request) string {
	m := req.Messages[len(req.Messages)-1]
	return m.Parts[len(m.Parts)-1].Text
}

// counting is a turn that answers with parts and counts its tokens as a
// provider would (here: the estimate), plus extra input tokens.
func counting(extra int64, parts ...provider.Part) turnFunc {
	return func(ctx context.Context, req provider.Request) (*provider.Response, error) {
		resp, err := reply(parts...)(ctx, req)
		if err != nil {
			return nil, err
		}
		resp.InputTokens = models.Estimate(req) + extra
		resp.OutputTokens = models.EstimateMessage(resp.Message)
		return resp, nil
	}
}

// A scripted session that passes a small window is compacted before its next
// model call: the summary request carries the whole conversation and the
// summary prompt, the next request the summary and the new prompt — not the
// old turn — and a reload folds the log into the same context.
func TestCompactionReplacesTheOldTurns(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("old answer ", 400) // about 1100 tokens
	p := scripted(t, `{"turns":[{"text":"`+big+`"},{"text":"SUMMARY: the user said one."},{"text":"answer two"}]}`)
	cfg := Config{Provider: p, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Model: "m", ContextWindow: 1000}
	a := New(cfg)
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if cu := a.ContextUsage(); cu.Tokens < 800 || cu.Window != 1000 || !cu.Estimated {
		t.Fatalf("context after one = %+v, want past 800 of 1000, estimated (the script counts nothing)", cu)
	}
	if _, err := a.Prompt(t.Context(), "two"); err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (one, the summary, two)", len(reqs))
	}
	sum := reqs[1]
	if got := shown(sum.Messages[:2]); !slices.Equal(got, []string{"user: text one", "assistant: text " + big}) {
		t.Errorf("summary request starts with %q", got)
	}
	if !strings.HasPrefix(lastText(sum), compactPrompt[:40]) || !strings.Contains(describe(sum.Messages)[2], "text two") {
		t.Errorf("summary request's last message = %q, want the prompt two then the summary prompt", describe(sum.Messages)[2])
	}
	want := []string{"user: text [summary] SUMMARY: the user said one. | text two"}
	if got := shown(reqs[2].Messages); !slices.Equal(got, want) {
		t.Errorf("request after the compaction:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cu := a.ContextUsage(); cu.Tokens >= 800 {
		t.Errorf("context after the compaction = %+v, want below the threshold", cu)
	}

	recs := e.records(t)
	wantRecs := []string{"user one", "assistant " + big, "end end_turn", "user two",
		"compaction keep 1: SUMMARY: the user said one.", "assistant answer two", "end end_turn"}
	if got := summary(recs); !slices.Equal(got, wantRecs) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRecs, "\n"))
	}

	// Reloaded, the agent has the compacted context and counts it the same.
	b := New(cfg)
	for _, r := range recs {
		b.Fold(r)
	}
	if got, want := shown(b.messages()), shown(a.messages()); !slices.Equal(got, want) {
		t.Errorf("reloaded context:\n%s\nlive:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b.ContextUsage() != a.ContextUsage() {
		t.Errorf("reloaded context usage %+v, live %+v", b.ContextUsage(), a.ContextUsage())
	}
}

// The provider's count decides, not only the estimate: a context that looks
// small but was counted large is compacted, and one counted small is not.
func TestCompactionFollowsTheProvidersCount(t *testing.T) {
	for _, tc := range []struct {
		name      string
		extra     int64
		compactAt float64
		compact   bool
	}{
		{"counted large", 900, 0, true},
		{"counted small", 0, 0, false},
		{"counted large, a lower threshold", 500, 0.5, true},
		{"counted large, a higher threshold", 850, 0.9, false},
		{"counted large, never", 2000, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			fp := &fakeProvider{turns: []turnFunc{counting(tc.extra, text("short")), reply(text("SUMMARY")), reply(text("ok"))}}
			a := New(Config{Provider: fp, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, ContextWindow: 1000, CompactAt: tc.compactAt})
			if _, err := a.Prompt(t.Context(), "one"); err != nil {
				t.Fatal(err)
			}
			cu := a.ContextUsage()
			if cu.Estimated || cu.Tokens < tc.extra {
				t.Errorf("after a counted call: %+v, want the provider's count (at least %d), not estimated", cu, tc.extra)
			}
			if _, err := a.Prompt(t.Context(), "two"); err != nil {
				t.Fatal(err)
			}
			compacted := slices.ContainsFunc(e.records(t), func(r session.Record) bool { return r.Type == session.TypeCompaction })
			if compacted != tc.compact {
				t.Errorf("compacted = %v, want %v", compacted, tc.compact)
			}
		})
	}
}

// Past the threshold in the middle of a turn whose own calls filled the window,
// nothing is kept but the summary: the large result does not survive, and the
// conversation is still one the APIs accept.
func TestCompactionMidTurnDropsALargeTurn(t *testing.T) {
	e := newEnv(t)
	p := &probe{run: func(_ context.Context, _, id string) tool.Result {
		if id == "big" {
			return tool.Text(strings.Repeat("data ", 1000))
		}
		return tool.Text("small")
	}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(text("first")),
		reply(use("1", "look", `{"id":"big"}`)),
		reply(text("SUMMARY of it all")),
		reply(text("done")),
	}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, ContextWindow: 1000})
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(t.Context(), "two"); err != nil {
		t.Fatal(err)
	}
	reqs := fp.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if err := checkConversation(reqs[2].Messages); err != nil {
		t.Errorf("summary request: %v", err)
	}
	if got, want := shown(reqs[3].Messages), []string{"user: text [summary] SUMMARY of it all"}; !slices.Equal(got, want) {
		t.Errorf("request after the compaction = %q, want %q", got, want)
	}
}

// A summary that is itself past the threshold is not compacted again and again:
// the model call after a compaction goes out.
func TestCompactionRunsOncePerCall(t *testing.T) {
	e := newEnv(t)
	huge := strings.Repeat("summary ", 600)
	fp := &fakeProvider{turns: []turnFunc{counting(0, text(strings.Repeat("x", 4000))), reply(text(huge)), reply(text("ok"))}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, ContextWindow: 1000})
	for _, prompt := range []string{"one", "two"} {
		if _, err := a.Prompt(t.Context(), prompt); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fp.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// /compact with a focus: the summary prompt names it, the record keeps it, an
// empty session has nothing to compact, and a failed summary logs nothing.
func TestCompactOnRequest(t *testing.T) {
	e := newEnv(t)
	fp := &fakeProvider{}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools})
	if err := a.Compact(t.Context(), ""); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("Compact of nothing = %v", err)
	}
	fp.turns = []turnFunc{reply(text("hello")), reply(text("SUMMARY"))}
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if err := a.Compact(t.Context(), "the parser"); err != nil {
		t.Fatal(err)
	}
	reqs := fp.requests()
	if got := lastText(reqs[1]); !strings.HasSuffix(got, "focus on: the parser\n") {
		t.Errorf("summary prompt ends %q", got[max(len(got)-60, 0):])
	}
	recs := e.records(t)
	last := recs[len(recs)-1]
	if last.Type != session.TypeCompaction || last.Focus != "the parser" || last.Keep != 0 || last.Usage == nil || last.Usage.InputTokens != 100 {
		t.Errorf("last record = %+v, want a compaction with the focus, keeping nothing (one turn), with its usage", last)
	}
	fp.turns = []turnFunc{func(context.Context, provider.Request) (*provider.Response, error) {
		return nil, errors.New("overloaded")
	}}
	if err := a.Compact(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("failed Compact = %v", err)
	}
	fp.turns = []turnFunc{reply(use("1", "look", `{}`))}
	if err := a.Compact(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "no summary") {
		t.Errorf("Compact answered by a tool call only = %v", err)
	}
	if n := len(e.records(t)); n != len(recs) {
		t.Errorf("failed compactions logged %d records", n-len(recs))
	}
}

// A failed automatic compaction ends the turn with the error, before the model
// is called with a context that would not fit.
func TestAutoCompactionFailureEndsTheTurn(t *testing.T) {
	e := newEnv(t)
	fp := &fakeProvider{turns: []turnFunc{counting(0, text(strings.Repeat("x", 4000))), func(context.Context, provider.Request) (*provider.Response, error) {
		return nil, errors.New("overloaded")
	}}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, ContextWindow: 1000})
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	stop, err := a.Prompt(t.Context(), "two")
	if stop != StopError || err == nil || !strings.Contains(err.Error(), "compact") {
		t.Errorf("Prompt = %v, %v; want an error naming the compaction", stop, err)
	}
	if n := len(fp.requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// The builder's compaction rule on a hand-made log: the kept turns start at
// their prompt even when it shares a message with results of an interrupted
// turn, nested instructions survive (once), and later turns can be compacted
// again.
func TestBuilderCompaction(t *testing.T) {
	b := builder{outputCap: 1000}
	res := tool.Text("r")
	for _, r := range []session.Record{
		{Type: session.TypeUser, Text: "one"},
		{Type: session.TypeToolCall, CallID: "1", Name: "read"},
		{Type: session.TypeToolResult, CallID: "1", Result: &res},
		{Type: session.TypeInstructions, Path: "sub/AGENTS.md", Text: "SUB"},
		{Type: session.TypeTurnEnd, StopReason: "max_turns"},
		{Type: session.TypeUser, Text: "two"},
		{Type: session.TypeAssistant, Text: "answer two"},
		{Type: session.TypeTurnEnd},
		{Type: session.TypeUser, Text: "three"},
		{Type: session.TypeAssistant, Text: "answer three"},
		{Type: session.TypeCompaction, Text: "S1", Keep: 2},
	} {
		b.fold(r)
	}
	instr := instructionsPart(session.Record{Path: "sub/AGENTS.md", Text: "SUB"}).Text
	want := []string{
		"user: text [summary] S1 | text " + instr + " | text two",
		"assistant: text answer two",
		"user: text three",
		"assistant: text answer three",
	}
	if got := shown(b.messages()); !slices.Equal(got, want) {
		t.Fatalf("after the first compaction:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.fold(session.Record{Type: session.TypeCompaction, Text: "S2", Keep: 1})
	want = []string{"user: text [summary] S2 | text " + instr + " | text three", "assistant: text answer three"}
	if got := shown(b.messages()); !slices.Equal(got, want) {
		t.Fatalf("after the second compaction:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b.fold(session.Record{Type: session.TypeCompaction, Text: "S3", Keep: 5})
	want = []string{"user: text [summary] S3 | text " + instr + " | text three", "assistant: text answer three"}
	if got := shown(b.messages()); !slices.Equal(got, want) {
		t.Fatalf("keeping more turns than there are:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A compaction is a model call like any other: it goes to the model and
// thinking level in force after a model change (/model), not the session's first.
func TestCompactionUsesTheModelInForce(t *testing.T) {
	e := newEnv(t)
	p := scripted(t, `{"turns":[{"text":"answer one"},{"text":"SUMMARY"}]}`)
	a := New(Config{Provider: p, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Model: "first", Thinking: "low"})
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetModel("second", "high"); err != nil {
		t.Fatal(err)
	}
	if err := a.Compact(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Model + "/" + reqs[0].Thinking; got != "first/low" {
		t.Errorf("the prompt went to %s, want first/low", got)
	}
	if got := reqs[1].Model + "/" + reqs[1].Thinking; got != "second/high" {
		t.Errorf("the compaction went to %s, want second/high (the model in force)", got)
	}
}
