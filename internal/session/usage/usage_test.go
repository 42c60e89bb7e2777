package usage

import (
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
)

// A running turn's calls count until its turn_end, which replaces them; a
// legacy turn_end's totals, which include the turn's compaction, do not count
// it twice; each call is priced at its own model, a legacy total at the model
// in force.
func TestFold(t *testing.T) {
	f := New("claude-sonnet-4-5")
	f.Record(session.Record{Type: session.TypeUser})
	f.Call(session.CallUsage{Model: "claude-haiku-4-5", InputTokens: 1000, OutputTokens: 100})
	if got := f.Total(); got.InputTokens != 1000 || got.OutputTokens != 100 || !near(got.Cost, 1500/1e6) {
		t.Errorf("with a call running: %+v", got)
	}
	if !f.Record(session.Record{Type: session.TypeCompaction, Usage: &session.Usage{InputTokens: 2000, OutputTokens: 10}}) {
		t.Error("a compaction did not change the totals")
	}
	f.Record(session.Record{Type: session.TypeTurnEnd, Usage: &session.Usage{InputTokens: 3000, OutputTokens: 110,
		Calls: []session.CallUsage{{Model: "claude-haiku-4-5", InputTokens: 1000, OutputTokens: 100}}}})
	turn1 := 1500/1e6 + (2000*3+10*15)/1e6 // the call at haiku, the compaction at sonnet (in force)
	if got := f.Total(); got.InputTokens != 3000 || got.OutputTokens != 110 || !near(got.Cost, turn1) || got.Unpriced {
		t.Errorf("after the turn: %+v, want 3000 in, 110 out, $%f", got, turn1)
	}
	if got := f.LastTurn(); got != f.Total() {
		t.Errorf("the first turn spent %+v, want all of %+v", got, f.Total())
	}

	f.Record(session.Record{Type: session.TypeModel, Model: "unknown-model"})
	f.Record(session.Record{Type: session.TypeUser})
	f.Record(session.Record{Type: session.TypeCompaction, Usage: &session.Usage{InputTokens: 500, OutputTokens: 5,
		Calls: []session.CallUsage{{Model: "claude-haiku-4-5", InputTokens: 500, OutputTokens: 5}}}})
	f.Record(session.Record{Type: session.TypeTurnEnd, Usage: &session.Usage{InputTokens: 600, OutputTokens: 6}}) // legacy
	got := f.Total()
	if got.InputTokens != 3600 || got.OutputTokens != 116 || !near(got.Cost, turn1+(500+25)/1e6) || !got.Unpriced {
		t.Errorf("after a legacy turn at an unknown model: %+v", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
