// Package usage folds a session's tokens and cost from its log records: one
// fold that the host (its status, /cost, the chat's status line, ACP's
// usage_update) and the web page share, so they show the same figures.
package usage

import (
	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
)

// Totals is tokens and what they cost.
type Totals struct {
	InputTokens, OutputTokens int64
	// Cost is what the calls whose model has a known price cost, in US dollars,
	// each call priced at the model that made it; Unpriced says some tokens went
	// to a model whose price is not known.
	Cost     float64
	Unpriced bool
}

func (t *Totals) add(model string, in, out int64) {
	t.InputTokens += in
	t.OutputTokens += out
	if c, ok := models.Cost(model, models.Usage{InputTokens: in, OutputTokens: out}); ok {
		t.Cost += c
	} else if in+out > 0 {
		t.Unpriced = true
	}
}

func (t *Totals) plus(u Totals) {
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.Cost += u.Cost
	t.Unpriced = t.Unpriced || u.Unpriced
}

// Fold is the usage of a session's records, folded in log order: a turn_end's
// calls, each at its own model (or, in logs written before calls were logged,
// its totals at the model in force), compactions, and while a turn runs its
// calls so far, which its turn_end then replaces, so a live session and a
// reloaded one count the same. The zero Fold starts at the provider's default
// model; New starts at another.
type Fold struct {
	model     string // in force: the session's configured one until a model record
	total     Totals
	turn      Totals              // since the previous turn_end
	lastTurn  Totals              // the last turn_end's
	compacted session.Usage       // compactions' tokens since the last prompt, which a legacy turn_end's totals include
	pending   []session.CallUsage // the running turn's calls, until its turn_end
	// tasks are the task calls without a result yet; children their
	// subagents' model calls so far, which the result's meta then replaces.
	tasks    map[string]bool
	children map[string][]session.CallUsage
}

// New is a fold of a session whose first model is model (its configuration's;
// the log only records changes).
func New(model string) Fold { return Fold{model: model} }

// Record folds r and says whether the totals changed.
func (f *Fold) Record(r session.Record) bool {
	switch r.Type {
	case session.TypeModel:
		f.model = r.Model
	case session.TypeUser:
		f.compacted = session.Usage{}
	case session.TypeCompaction:
		if r.Usage == nil {
			return false
		}
		f.calls(r.Usage)
		f.compacted.InputTokens += r.Usage.InputTokens
		f.compacted.OutputTokens += r.Usage.OutputTokens
		return true
	case session.TypeTurnEnd:
		f.pending = nil
		if r.Usage != nil {
			u := *r.Usage
			if len(u.Calls) == 0 { // a legacy turn_end: its totals include the turn's compactions
				u.InputTokens = max(u.InputTokens-f.compacted.InputTokens, 0)
				u.OutputTokens = max(u.OutputTokens-f.compacted.OutputTokens, 0)
			}
			f.calls(&u)
		}
		f.compacted = session.Usage{}
		f.lastTurn, f.turn = f.turn, Totals{}
		return true
	case session.TypeToolCall:
		if r.Name == taskTool {
			if f.tasks == nil {
				f.tasks = map[string]bool{}
			}
			f.tasks[r.CallID] = true
		}
	case session.TypeToolResult:
		return f.taskResult(r)
	case session.TypeHeader, session.TypeAssistant, session.TypeThinking, session.TypeProgress,
		session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeInstructions,
		session.TypeDamaged, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
	return false
}

// calls adds u's calls, or u's totals at the model in force when it has none.
func (f *Fold) calls(u *session.Usage) {
	var t Totals
	if len(u.Calls) == 0 {
		t.add(f.model, u.InputTokens, u.OutputTokens)
	}
	for _, c := range u.Calls {
		t.add(c.Model, c.InputTokens, c.OutputTokens)
	}
	f.total.plus(t)
	f.turn.plus(t)
}

// Call notes a model call of the running turn, which the log holds only once
// the turn ends.
func (f *Fold) Call(c session.CallUsage) { f.pending = append(f.pending, c) }

// Total is the session's usage: what the log holds plus the running turn's
// calls and its subagents'.
func (f *Fold) Total() Totals {
	t := f.total
	for _, c := range f.pending {
		t.add(c.Model, c.InputTokens, c.OutputTokens)
	}
	for _, cs := range f.children {
		for _, c := range cs {
			t.add(c.Model, c.InputTokens, c.OutputTokens)
		}
	}
	return t
}

// taskTool is the task tool's name: its results' meta holds the model calls
// of the subagent (its child session), which count toward the session.
const taskTool = "task"

// Child notes a model call of the subagent of the running task call callID,
// which the log holds only once the task's result is logged.
func (f *Fold) Child(callID string, c session.CallUsage) {
	if f.children == nil {
		f.children = map[string][]session.CallUsage{}
	}
	f.children[callID] = append(f.children[callID], c)
}

// taskResult folds a task's result: its subagent's calls, from its meta.
func (f *Fold) taskResult(r session.Record) bool {
	if !f.tasks[r.CallID] {
		return false
	}
	delete(f.tasks, r.CallID)
	delete(f.children, r.CallID)
	if r.Result == nil || len(r.Result.Meta) == 0 {
		return false
	}
	var m struct {
		Usage []session.CallUsage `json:"usage"`
	}
	if json.Unmarshal(r.Result.Meta, &m) != nil || len(m.Usage) == 0 {
		return false
	}
	f.calls(&session.Usage{Calls: m.Usage})
	return true
}

// LastTurn is what was spent from the end of the turn before the last turn_end
// folded to it (a compaction between turns included), so that the turns' figures
// add up to the session's.
func (f *Fold) LastTurn() Totals { return f.lastTurn }
