package host

import (
	"sync"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
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
	// NoBypass says a policy turned the bypass mode off (Options.NoBypass).
	NoBypass bool
	// State is what the session is doing: a turn running (a job_output waiting
	// for its job included), waiting for the user's answer, or idle.
	State State
	// MCPListed counts the times an MCP server changed what it offers (its
	// tools, prompts or resources: list_changed) during the session. A
	// consumer that keeps the session's commands (CommandsFor) or resources
	// takes them again when it grows.
	MCPListed uint64
	// Line is what the status line command printed last (Options.StatusLine):
	// the user's, shown as it is, escape sequences included; "" without one.
	Line string
}

// State is whether a session works, waits for the user or is idle.
type State string

// The states.
const (
	StateIdle    State = "idle"
	StateWorking State = "working"
	StateWaiting State = "waiting" // a permission or a question waits for the user's answer
)

// usageFold is the session's usage fold, shared by the turn's goroutine and
// the status's readers.
type usageFold struct {
	mu sync.Mutex
	f  usage.Fold
}

func (u *usageFold) record(r session.Record) {
	u.mu.Lock()
	u.f.Record(r)
	u.mu.Unlock()
}

func (u *usageFold) call(c session.CallUsage) {
	u.mu.Lock()
	u.f.Call(c)
	u.mu.Unlock()
}

// child notes a model call of the subagent of the task call callID.
func (u *usageFold) child(callID string, c session.CallUsage) {
	u.mu.Lock()
	u.f.Child(callID, c)
	u.mu.Unlock()
}

func (u *usageFold) total() usage.Totals {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.f.Total()
}

// Status is the session's status now.
func (s *Session) Status() Status {
	model, thinking := s.agent.Model()
	cu := s.agent.ContextUsage()
	st := Status{Model: model, Thinking: thinking, Window: cu.Window, ContextTokens: cu.Tokens,
		Mode: s.agent.Mode(), Cwd: s.ws.Cwd(), Sandbox: s.o.Sandbox, Confined: s.agent.AutoAvailable(), NoBypass: !s.agent.BypassAvailable(),
		MCPListed: s.notes.listed.Load()}
	switch {
	case s.asking.Load() > 0:
		st.State = StateWaiting
	case s.working.Load():
		st.State = StateWorking
	default:
		st.State = StateIdle
	}
	t := s.usage.total()
	st.InputTokens, st.OutputTokens, st.Cost, st.Unpriced = t.InputTokens, t.OutputTokens, t.Cost, t.Unpriced
	st.Line = s.statusLine.text()
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
	s.usage.record(r)
	s.steering.fold(r)
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
	was := s.lastStatus
	s.lastStatus = st
	s.bus.publish(Event{Kind: KindStatus, Status: st})
	if was.Line, st.Line = "", ""; st != was {
		s.statusLine.poke() // not for its own line: that would run it again and again
	}
}
