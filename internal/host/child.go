package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/task"
)

// A subagent's budget: model round trips and tokens (input and output) of
// its one turn.
const (
	childTurns  = 40
	childTokens = 2_000_000
	// maxSubagents bound the subagents of a session that run at once, and so
	// their model calls: the others wait for a slot (40 task calls in one
	// message made up to 37 model calls at once).
	maxSubagents = 8
)

// subagents starts the task tool's child sessions (tool.Session.Subagents).
type subagents struct{ s *Session }

func (x subagents) Run(ctx context.Context, t tool.Task) (tool.TaskOutcome, error) {
	return x.s.runTask(ctx, t)
}

// subagent is what a child session knows of its parent, and what it gathers
// of its own records for the task's outcome.
type subagent struct {
	parent *Session
	call   string // the parent's task call
	agent  string
	reg    *tool.Registry
	system string // the agent's own prompt

	mu        sync.Mutex
	calls     int
	text      string // the assistant text since its last tool call
	afterCall bool
	usage     []tool.TaskUsage
}

// Agents are the session's custom agents, which the task tool offers besides
// explore.
func (s *Session) Agents() []agents.Agent { return s.agents }

// runTask runs a task in a child session: a log of its own beside the
// parent's (its header names the parent and the call), the tools task.ChildTools
// gives the agent, the parent's mode (plan mode reads only) and model unless
// the agent names one, the parent's permission prompts. Its events go out on
// the parent's stream as KindChild; ctx is the parent's turn, so cancelling
// it cancels the child and kills its commands.
func (s *Session) runTask(ctx context.Context, t tool.Task) (tool.TaskOutcome, error) {
	name := cmp.Or(t.Agent, task.Explore)
	var def *agents.Agent
	if a, ok := agents.Find(s.agents, name); ok {
		def = &a
	} else if name != task.Explore {
		names := []string{task.Explore}
		for _, a := range s.agents {
			names = append(names, a.Name)
		}
		return tool.TaskOutcome{}, fmt.Errorf("there is no agent %q; the agents are: %s", name, strings.Join(names, ", "))
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return tool.TaskOutcome{}, fmt.Errorf("cancelled while waiting for another subagent to end: %w", ctx.Err())
	}
	sa := &subagent{parent: s, call: t.CallID, agent: name, reg: tool.NewRegistry(task.ChildTools(s.reg, def)...), system: task.ExplorePrompt}
	o := s.o
	o.Tools, o.MCP, o.servers, o.Closers = nil, nil, nil, nil
	o.Root, o.Roots = s.ws.Root(), s.ws.Roots()[1:]
	o.Rules = s.rules.Load() // the rules as /permissions left them
	o.Mode = childMode(s.agent.Mode())
	o.Model, o.Thinking = s.agent.Model()
	if def != nil {
		sa.system = def.Prompt
		if def.Model != "" {
			o.Model = childModel(def.Model, o.Model)
		}
	}
	o.Provider = s.Provider
	o.sub = sa
	ws, err := openWorkspace(o)
	if err != nil {
		return tool.TaskOutcome{}, err
	}
	_ = ws.SetCwd(s.ws.Cwd()) // it starts where the parent is; the root else
	o.Closers = []io.Closer{ws}
	id := session.NewID(o.Now())
	c := assemble(o, ws, nil, id, &mcpNotes{})
	c.tools.Parent = s.tools
	log, err := session.Create(filepath.Dir(s.log.Path()), id, ws.Root(), session.Options{Now: o.Now, System: c.systemPrompt(),
		Parent: &session.Parent{Session: s.ID(), CallID: t.CallID, Agent: name}, Scratch: o.ScratchLog})
	if err != nil {
		return tool.TaskOutcome{}, errors.Join(err, c.Kill())
	}
	c.log = log
	c.agent.Fold(log.Header())
	// What the parent always allows, the subagent does: logged in its log,
	// which is the only state.
	if keys := s.agent.Allowed(); len(keys) > 0 {
		if err := c.agent.Allow(keys); err != nil {
			return tool.TaskOutcome{}, errors.Join(err, c.Kill())
		}
	}
	// SubagentStart hooks run in the child: what they add is its context.
	if _, err := c.agent.RunHooks(ctx, hooks.Input{Event: hooks.SubagentStart}); err != nil {
		return tool.TaskOutcome{}, errors.Join(err, c.Kill())
	}
	if err := s.adopt(c); err != nil {
		return tool.TaskOutcome{}, errors.Join(err, c.Kill())
	}
	stop, perr := c.agent.Prompt(ctx, t.Prompt)
	s.kids.Lock()
	delete(s.kids.m, c)
	s.kids.Unlock()
	cerr := c.Close()
	sa.mu.Lock()
	defer sa.mu.Unlock()
	out := tool.TaskOutcome{Agent: name, Session: id, Text: strings.TrimSpace(sa.text), Calls: sa.calls, Stop: string(stop), Usage: sa.usage}
	if perr != nil {
		out.Text = strings.TrimSpace(out.Text + "\n\n" + perr.Error())
	}
	if cerr != nil {
		s.o.Warn(fmt.Sprintf("subagent session %s: %v", id, cerr))
	}
	return out, nil
}

// childMode is a subagent's mode under a parent in mode m: the same, but for
// plan mode, which it follows as read-only (a subagent hands over no plan).
func childMode(m agent.Mode) agent.Mode {
	if m == agent.ModePlan {
		return agent.ModeReadOnly
	}
	return m
}

// adopt makes c one of the subagents whose mode follows the session's, with
// the mode the session is in now (it may have changed since c was made).
func (s *Session) adopt(c *Session) error {
	s.kids.Lock()
	defer s.kids.Unlock()
	if s.kids.m == nil {
		s.kids.m = map[*Session]struct{}{}
	}
	s.kids.m[c] = struct{}{}
	if m := childMode(cmp.Or(s.kids.mode, s.agent.Mode())); m != c.agent.Mode() {
		return c.agent.SetMode(m)
	}
	return nil
}

// modeToKids hands the session's new mode m to its running subagents, logged
// in each, so that a mode narrowed while they run holds from their next call.
func (s *Session) modeToKids(m agent.Mode) {
	s.kids.Lock()
	defer s.kids.Unlock()
	s.kids.mode = m
	for c := range s.kids.m {
		if err := c.agent.SetMode(childMode(m)); err != nil {
			s.o.Warn(fmt.Sprintf("subagent session %s keeps its mode: %v", c.ID(), err))
		}
	}
}

// configure makes the child's agent a subagent's: its budget, its questions
// put to the parent's user, and its events handed to the parent's stream.
func (sa *subagent) configure(s *Session, cfg *agent.Config) {
	id := s.ID()
	if cfg.Ask != nil {
		cfg.Ask = func(ctx context.Context, req agent.QuestionRequest) (card.Answer, error) { return sa.ask(ctx, id, req) }
	}
	cfg.MaxTurns, cfg.TokenBudget = childTurns, childTokens
	cfg.Effect = sa.parent.effect // what it changes is the parent's prompt's
	s.bus.forward = func(e Event) { sa.forward(id, e) }
}

// prompt is the system prompt's part that makes the agent a subagent.
func (sa *subagent) prompt() string {
	p := "\n\n# Subagent\n\nYou are the subagent " + sa.agent + ": another agent handed you the task in the user message. " +
		"Work on it with your tools, then answer with one final message that holds everything the task asks for: it is all the other agent reads."
	if sa.system != "" {
		p += "\n\n" + strings.TrimSpace(sa.system)
	}
	return p
}

// forward hands a child's event to the parent's stream: its records and its
// calls starting; its usage counts toward the parent's status as it comes.
// Called under the child's bus lock, so the parent sees the child's order.
func (sa *subagent) forward(child string, e Event) {
	p := sa.parent
	switch e.Kind {
	case KindRecord:
		sa.note(e.Record)
		p.bus.publish(Event{Kind: KindChild, Child: &Child{Call: sa.call, Session: child, Agent: sa.agent, Event: e}})
	case KindCallStarted:
		p.bus.publish(Event{Kind: KindChild, Child: &Child{Call: sa.call, Session: child, Agent: sa.agent, Event: e}})
	case KindUsage:
		for _, c := range e.Usage.Calls {
			p.usage.child(sa.call, c)
		}
		p.publishStatus()
	case KindDelta, KindModelRequest, KindStatus, KindPermission, KindQuestion, KindChild, KindNotice:
		// The child's text shows once it is a record; its status is the parent's
		// (a child's input is the task's, never the user's).
	}
}

// note gathers what the task's outcome says from a child record.
func (sa *subagent) note(r session.Record) {
	sa.mu.Lock()
	defer sa.mu.Unlock()
	switch r.Type {
	case session.TypeToolCall:
		sa.calls++
		sa.afterCall = true
	case session.TypeAssistant:
		if sa.afterCall {
			sa.text, sa.afterCall = "", false
		}
		if sa.text != "" {
			sa.text += "\n\n"
		}
		sa.text += r.Text
	case session.TypeTurnEnd:
		if r.Usage != nil {
			for _, c := range r.Usage.Calls {
				sa.usage = append(sa.usage, tool.TaskUsage{Model: c.Model, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens})
			}
		}
	case session.TypeHeader, session.TypeUser, session.TypeThinking, session.TypeProgress, session.TypeToolResult,
		session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
		session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeDamaged, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
}

// permit asks the parent's consumers about a child's call, the card titled
// with the agent's name so the user knows who asks.
func (sa *subagent) permit(ctx context.Context, child string, req agent.PermissionRequest) (agent.Decision, error) {
	req.Card = titled(req.Card, sa.agent)
	d, err := sa.parent.askPermission(ctx, &Permission{Request: req, Parent: sa.call, Child: child})
	if ap := req.Approval; err == nil && d == agent.AllowAlways && ap.Remember && len(ap.Keys) > 0 {
		// "Always" answered a subagent is the session's: its next calls and
		// subagents are not asked again.
		if err := sa.parent.agent.Allow(ap.Keys); err != nil {
			return agent.Reject, err
		}
	}
	return d, err
}

// ask puts a child's question (ask_user) to the parent's consumers, its card
// titled with the agent's name.
func (sa *subagent) ask(ctx context.Context, child string, req agent.QuestionRequest) (card.Answer, error) {
	req.Card = titled(req.Card, sa.agent)
	q := NewQuestion(req)
	q.Parent, q.Child = sa.call, child
	return sa.parent.askQuestion(ctx, q)
}

// titled is a call card with the subagent's name in front of its title (a
// command's in front of its description: its title is the command).
func titled(c card.Call, agent string) card.Call {
	pre := agent + ": "
	switch c := c.(type) {
	case *card.GenericCall:
		d := *c
		d.Title = pre + d.Title
		return &d
	case *card.TerminalCall:
		d := *c
		d.Description = strings.TrimSuffix(pre+d.Description, ": ")
		return &d
	case *card.DiffCall:
		d := *c
		d.Title = pre + d.Title
		return &d
	case *card.PlanCall:
		d := *c
		d.Title = pre + d.Title
		return &d
	case *card.QuestionCall:
		d := *c
		d.Title = pre + d.Title
		return &d
	case *card.TaskCall:
		d := *c
		d.Title = pre + d.Title
		return &d
	}
	return c
}

// childModel is the model an agent file names: Claude Code's aliases (sonnet,
// opus, haiku) are the newest of that family while the session runs Claude,
// and the session's model otherwise; any other name is a model's.
func childModel(name, current string) string {
	switch name {
	case "sonnet", "opus", "haiku":
		if current != "" && !strings.HasPrefix(current, "claude") {
			return current
		}
		for _, m := range models.Builtin("anthropic") {
			if strings.HasPrefix(m.ID, "claude-"+name) {
				return m.ID
			}
		}
		return current
	}
	return name
}

// ReplayChild hands fn the records of the child session id, which a task's
// result card names, from its log in dir, where its parent's is: a replay
// nests them under the task as the live stream did.
func ReplayChild(dir, id string, fn func(session.Record) error) error {
	path, err := session.ChildPath(dir, id)
	if err != nil {
		return err
	}
	return session.Scan(path, fn)
}

// agentsText is /agents: the agents the task tool can start, with what they
// are for, their tools and model, and where each is defined.
func (s *Session) agentsText() string {
	var b strings.Builder
	b.WriteString("Agents the task tool can start:\n- explore (built in): reads and searches, changes nothing")
	for _, a := range s.agents {
		name := a.Name
		if a.Display != "" {
			name += " (" + a.Display + ")" // as its file writes it
		}
		fmt.Fprintf(&b, "\n- %s: %s", name, a.Description)
		var names []string
		for _, t := range task.ChildTools(s.reg, &a) {
			names = append(names, t.Name())
		}
		fmt.Fprintf(&b, "\n  tools: %s; model: %s; %s", strings.Join(names, ", "), cmp.Or(a.Model, "inherited"), a.Path)
		if len(a.Ignored) > 0 {
			fmt.Fprintf(&b, "\n  left out: %s", strings.Join(a.Ignored, ", "))
		}
	}
	if len(s.agents) == 0 {
		b.WriteString("\nAdd your own as Markdown files in .dsh/agents or .claude/agents (the project's), ~/.config/dsh/agents or ~/.claude/agents.")
	}
	return b.String()
}
