package web

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
)

// The page's usage is the host's: a session logged by the host with calls to
// two models at different prices and a compaction, reloaded under another
// configured model, has on its page the tokens and cost of host's Status after
// Load (what /cost, the chat's status line and ACP's usage_update show), and
// its turns' figures add up to them.
func TestPageUsageIsTheHostsStatus(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [
		{"text": "one", "input_tokens": 1000, "output_tokens": 100},
		{"text": "SUMMARY", "input_tokens": 3000, "output_tokens": 200},
		{"text": "two", "input_tokens": 2000, "output_tokens": 50}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := host.Options{SessionDir: dir, Root: t.TempDir(), Mode: agent.ModeBypass, Model: "claude-sonnet-4-5",
		Provider: func() (provider.Provider, error) { return p, nil }, Warn: func(s string) { t.Log(s) }}
	s, err := host.Create(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Prompt(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"compact", ""}, {"model", "claude-haiku-4-5"}} {
		if r, err := s.Submit(ctx, host.Input{Text: "/" + c[0] + " " + c[1], Where: host.Both}); err != nil {
			t.Fatalf("/%s: %q, %v", c[0], r.Text, err)
		}
	}
	if _, err := s.Prompt(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	live, path := s.Status(), s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o.Model = "claude-opus-4-5" // the configuration changed since: the log's prices stand
	re, err := host.Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded := re.Status()
	if err := re.Close(); err != nil {
		t.Fatal(err)
	}
	sonnet, haiku := (1000*3+100*15+3000*3+200*15)/1e6, (2000*1+50*5)/1e6
	want := usage.Totals{InputTokens: 6000, OutputTokens: 350, Cost: sonnet + haiku}
	for name, st := range map[string]host.Status{"live": live, "loaded": loaded} {
		if got := (usage.Totals{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, Cost: st.Cost, Unpriced: st.Unpriced}); !sameTotals(got, want) {
			t.Errorf("the %s session's usage = %+v, want %+v", name, got, want)
		}
	}

	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := testBuilder(t).s
	pg := srv.sessionPage(strings.TrimSuffix(filepath.Base(path), ".jsonl"), recs, false)
	if got := pg.Usage.Totals; !sameTotals(got, usage.Totals{InputTokens: loaded.InputTokens, OutputTokens: loaded.OutputTokens,
		Cost: loaded.Cost, Unpriced: loaded.Unpriced}) {
		t.Errorf("the page's totals = %+v, the host's status after Load = %+v", got, loaded)
	}
	var sum usage.Totals
	var turns int
	for it := range pg.Items {
		if it.End != nil {
			turns++
			sum.InputTokens += it.End.Usage.InputTokens
			sum.OutputTokens += it.End.Usage.OutputTokens
			sum.Cost += it.End.Usage.Cost
			sum.Unpriced = sum.Unpriced || it.End.Usage.Unpriced
		}
	}
	if turns != 2 || !sameTotals(sum, pg.Usage.Totals) {
		t.Errorf("%d turns spent %+v in all; the session's totals are %+v", turns, sum, pg.Usage.Totals)
	}
}

func sameTotals(a, b usage.Totals) bool {
	d := a.Cost - b.Cost
	return a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens && a.Unpriced == b.Unpriced && d < 1e-12 && d > -1e-12
}

// testdata/usage-page.html is the page of a session with calls to two models at
// different prices, a compaction between turns (counted in the next turn), a
// legacy turn_end without calls (priced at the model in force) and a call to a
// model whose price is not known.
func TestGoldenUsagePage(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	call := func(model string, in, out int64) session.CallUsage {
		return session.CallUsage{Model: model, InputTokens: in, OutputTokens: out}
	}
	recs := []session.Record{
		{Type: session.TypeHeader, Time: t0, Version: 1, SessionID: sid, Cwd: "/src"},
		{Type: session.TypeUser, Time: t0, Text: "one"},
		{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 3000, OutputTokens: 150,
			Calls: []session.CallUsage{call("claude-sonnet-4-5", 1000, 100), call("claude-sonnet-4-5", 2000, 50)}}},
		{Type: session.TypeCompaction, Time: t0, Text: "summary", Usage: &session.Usage{InputTokens: 4000, OutputTokens: 300,
			Calls: []session.CallUsage{call("claude-sonnet-4-5", 4000, 300)}}},
		{Type: session.TypeModel, Time: t0, Model: "claude-haiku-4-5"},
		{Type: session.TypeUser, Time: t0, Text: "two"},
		{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 1000, OutputTokens: 20}},
		{Type: session.TypeModel, Time: t0, Model: "my-local-model"},
		{Type: session.TypeUser, Time: t0, Text: "three"},
		{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 500, OutputTokens: 10,
			Calls: []session.CallUsage{call("my-local-model", 500, 10)}}},
	}
	var out bytes.Buffer
	writeSession(&out, testBuilder(t).s.sessionPage(sid, recs, false))
	golden(t, filepath.Join("testdata", "usage-page.html"), out.Bytes())
}

// A session whose model reported no tokens says nothing of tokens: not "0
// tokens" in its header, not on its turns.
func TestTokensOnlyWhenKnown(t *testing.T) {
	recs := []session.Record{
		{Type: session.TypeHeader, Time: t0, Cwd: "/src"},
		{Type: session.TypeUser, Time: t0, Text: "hi"},
		{Type: session.TypeAssistant, Time: t0, Text: "hello"},
		{Type: session.TypeTurnEnd, Time: t0, StopReason: "end_turn", Usage: &session.Usage{}},
	}
	var out bytes.Buffer
	writeSession(&out, testBuilder(t).s.sessionPage(sid, recs, false))
	page := out.String()
	if !strings.Contains(page, `<span id="usage" class="usage"></span>`) || strings.Contains(page, "token") ||
		!strings.Contains(page, `<span>done</span>`) {
		t.Errorf("the page speaks of tokens no model reported:\n%s", page)
	}
}
