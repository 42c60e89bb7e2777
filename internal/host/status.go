package host

import (
	"sync"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/session"
)

// Status is what a session's consumers show of it: the facts the host folds
// from its log (model, mode and usage records), the same live and after a load.
// A KindStatus event carries it whenever one of them changes; consumers render
// it and keep no count of their own.
type Status struct {
	Model    string // the model in force; "" is the provider's default
	Thinking string // its thinking level; "" the configured one
	// Window is the model's context window in tokens (the configuration's for
	// that model, else the model table's); compaction uses the same.
	Window int64
	// ContextTokens is how full the window is: the provider's count at the last
	// model call plus an estimate of what was added since.
	ContextTokens int64
	// InputTokens and OutputTokens are the session's model calls', compactions
	// included.
	InputTokens, OutputTokens int64
	// Cost is what the calls whose model has a known price cost, in US dollars,
	// each call priced at the model that made it; Unpriced says some tokens went
	// to a model whose price is not known.
	Cost     float64
	Unpriced bool
	Mode     agent.Mode
	Cwd      string // the directory commands run in (absolute)
	Sandbox  sandbox.Mode
	// Confined says bash commands run in the sandbox, so the auto mode may be set.
	Confined bool
}

// usageFold is the tokens and cost folded from the log: a turn_end's calls (or,
// in logs written before calls were logged, its totals at the model in force),
// compactions, and while a turn runs its calls so far, which its turn_end then
// replaces, so the live session and a reloaded one count the same.
type usageFold struct {
	mu        sync.Mutex
	in, out   int64
	cost      float64
	unpriced  bool
	compacted session.Usage       // compactions' tokens since the last prompt, which its turn_end's totals include
	pending   []session.CallUsage // the running turn's calls, until its turn_end
}

func (f *usageFold) add(model string, in, out int64) {
	f.in += in
	f.out += out
	if c, ok := models.Cost(model, models.Usage{InputTokens: in, OutputTokens: out}); ok {
		f.cost += c
	} else if in+out > 0 {
		f.unpriced = true
	}
}

// record folds one record; model is the model in force at it.
func (f *usageFold) record(r session.Record, model string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Type {
	case session.TypeUser:
		f.compacted = session.Usage{}
	case session.TypeCompaction:
		if r.Usage == nil {
			return false
		}
		f.add(model, r.Usage.InputTokens, r.Usage.OutputTokens)
		f.compacted.InputTokens += r.Usage.InputTokens
		f.compacted.OutputTokens += r.Usage.OutputTokens
		return true
	case session.TypeTurnEnd:
		f.pending = nil
		if r.Usage == nil {
			return true
		}
		if len(r.Usage.Calls) > 0 {
			for _, c := range r.Usage.Calls {
				f.add(c.Model, c.InputTokens, c.OutputTokens)
			}
		} else {
			f.add(model, max(r.Usage.InputTokens-f.compacted.InputTokens, 0), max(r.Usage.OutputTokens-f.compacted.OutputTokens, 0))
		}
		f.compacted = session.Usage{}
		return true
	case session.TypeHeader, session.TypeAssistant, session.TypeThinking, session.TypeToolCall, session.TypeProgress,
		session.TypeToolResult, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeInstructions,
		session.TypeModel, session.TypeDamaged:
	}
	return false
}

// call notes a model call of the running turn.
func (f *usageFold) call(c session.CallUsage) {
	f.mu.Lock()
	f.pending = append(f.pending, c)
	f.mu.Unlock()
}

// into fills st's usage: what the log holds plus the running turn's calls.
func (f *usageFold) into(st *Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := usageFold{in: f.in, out: f.out, cost: f.cost, unpriced: f.unpriced}
	for _, c := range f.pending {
		g.add(c.Model, c.InputTokens, c.OutputTokens)
	}
	st.InputTokens, st.OutputTokens, st.Cost, st.Unpriced = g.in, g.out, g.cost, g.unpriced
}

// Status is the session's status now.
func (s *Session) Status() Status {
	model, thinking := s.agent.Model()
	cu := s.agent.ContextUsage()
	st := Status{Model: model, Thinking: thinking, Window: cu.Window, ContextTokens: cu.Tokens,
		Mode: s.agent.Mode(), Cwd: s.ws.Cwd(), Sandbox: s.o.Sandbox, Confined: s.agent.AutoAvailable()}
	s.usage.into(&st)
	return st
}

// window is a model's context window: the configuration's, else the table's.
func (s *Session) window(model string) int64 {
	if s.o.ContextWindows != nil {
		if n, ok := s.o.ContextWindows(model); ok && n > 0 {
			return n
		}
	}
	if s.o.ContextWindow > 0 {
		return s.o.ContextWindow
	}
	return models.Lookup(model).ContextWindow
}

// folded follows the agent's fold of r: the usage, and, live, the status event
// when a fact changed.
func (s *Session) folded(r session.Record) {
	if r.Type == session.TypeProgress {
		return // changes no fact; a flood of output must not cost a status each
	}
	model, _ := s.agent.Model()
	s.usage.record(r, model)
	if s.log != nil { // live: nobody subscribes while a log loads
		s.publishStatus()
	}
}

// onUsage follows a model call as it ends.
func (s *Session) onUsage(u session.Usage) {
	s.bus.publish(Event{Kind: KindUsage, Usage: u})
	for _, c := range u.Calls {
		s.usage.call(c)
	}
	s.publishStatus()
}

// publishStatus publishes the status if it changed since the last one published.
func (s *Session) publishStatus() {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	st := s.Status()
	if st == s.lastStatus {
		return
	}
	s.lastStatus = st
	s.bus.publish(Event{Kind: KindStatus, Status: st})
}
