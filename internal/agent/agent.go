// Package agent is the loop that turns tools into an agent: a user prompt goes to
// the model, the model's tool calls are permitted, executed and logged, and their
// results go back to the model until it ends its turn. Every step is a record in
// the session log, which is also what every UI renders.
package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// StopReason says why a turn ended; it is also the turn_end record's stopReason.
type StopReason string

// The stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"   // the model finished
	StopMaxTokens StopReason = "max_tokens" // the model ran out of output tokens
	StopRefusal   StopReason = "refusal"    // the model declined
	StopMaxTurns  StopReason = "max_turns"  // Config.MaxTurns model round-trips were used up
	StopBudget    StopReason = "budget"     // Config.TokenBudget tokens or Config.MaxCost dollars were used up
	StopTimeout   StopReason = "timeout"    // the turn's context ended with ErrTimeLimit as its cause
	StopCancelled StopReason = "cancelled"  // the user cancelled
	StopError     StopReason = "error"      // the model could not be reached or failed
)

// Defaults for the zero values of Config.
const (
	DefaultMaxTurns  = 50
	DefaultMaxTokens = 8192
	DefaultOutputCap = 60_000
)

// Messages the model (and the user, on the card) reads when a call does not run.
const (
	msgCancelled = "Cancelled by the user."
	msgRejected  = "The user rejected this call."
)

// ErrBusy is returned by Prompt while another turn of the same agent is running.
var ErrBusy = errors.New("a turn is already running in this session")

// ErrTimeLimit, as the cause of a turn's context (context.WithTimeoutCause),
// ends the turn as StopTimeout rather than StopCancelled: a run's time limit
// (dsh run --timeout), not the user.
var ErrTimeLimit = errors.New("the time limit was reached")

// Recorder is where the agent's records go: the session log (through the session
// host, which also publishes them). Put returns the record as it was persisted;
// the agent folds that into its state, so a reloaded session folds the same.
type Recorder interface {
	Put(session.Record) (session.Record, error)
}

// Config is what an Agent needs.
type Config struct {
	Provider provider.Provider
	Registry *tool.Registry
	Log      Recorder
	Tools    *tool.Session

	Model     string
	Thinking  string // the thinking level (provider.Request.Thinking); "" the provider's
	MaxTokens int    // per model response; 0 means DefaultMaxTokens
	MaxTurns  int    // model round-trips per prompt; 0 means DefaultMaxTurns
	// TokenBudget, if positive, ends a turn once its model calls have used
	// that many tokens, input and output (a subagent's budget).
	TokenBudget int64
	// MaxCost, if positive, ends a turn once Spent has grown by that many US
	// dollars since the turn began (dsh run --max-budget-usd); Spent is the
	// session's cost as /cost prices it, subagents included.
	MaxCost float64
	Spent   func() float64
	// Rules are the user's permission rules in force now (nil: none); a
	// deny holds in every mode, ask asks even where the mode would not, allow
	// runs where it would ask.
	Rules func() *rules.Set
	// FallbackModel is the model a turn goes on with when the one in force is
	// overloaded or unavailable (provider.ErrUnavailable); "" means none.
	FallbackModel string
	Mode          Mode
	// Auto says that commands run in the sandbox, so the auto mode may be set.
	Auto bool
	// NoBypass, if set, is the settings file whose disableBypassPermissionsMode
	// turns the bypass mode off: it is never set, nor taken from a log.
	NoBypass string
	Permit   Permitter // asked in modes that ask; nil means nobody can be asked
	// Ask puts a tool's question to the user (the plan's approval, ask_user);
	// nil means nobody can be asked, and the tools say so to the model.
	Ask    Asker
	System string // the full system prompt; build it with SystemPrompt
	// OnDelta, if set, receives the model's text and thinking as they stream.
	OnDelta func(provider.Delta)
	// OnUsage, if set, is told the tokens of each model call as it ends (a turn's
	// call with its one Calls entry; a compaction's without, its record has them).
	OnUsage func(session.Usage)
	// Folded, if set, is told each record once the agent has folded it (live and
	// on reload), so the host can fold the session's status after the agent's.
	Folded func(session.Record)
	// Window, if set, is the context window of a model (the configuration's or
	// the table's); it overrides ContextWindow, so a model change moves it.
	Window func(model string) int64
	// OnCallStart, if set, is told when a permitted call begins to run — the
	// moment between its tool_call and tool_result records that the log does
	// not hold, which a UI shows as "in progress".
	OnCallStart func(callID string)
	// Effect, if set, is told before a call or a hook runs what it may change
	// in the files: those a file tool names (absolute, links resolved), or, with all,
	// anything (a command, a job, a hook, a tool dsh cannot see into). It may
	// wait: the host's checkpoint of the files as they are comes first.
	Effect func(ctx context.Context, paths []string, all bool)
	// OutputCap is how many characters of a tool's output the model gets; the log
	// keeps all the tool returned. 0 means DefaultOutputCap.
	OutputCap int
	// ContextWindow is the model's context window in tokens; 0 means the model
	// table's figure. CompactAt is the share of it past which the context is
	// compacted before a model call; 0 means DefaultCompactAt, 1 or more never.
	ContextWindow int64
	CompactAt     float64
	// Hooks are the user's hooks (nil: none). HookBase, if set, gives the
	// fields of a hook's input the agent does not know: the session id, the
	// log's path and the working directory.
	Hooks    *hooks.Runner
	HookBase func() hooks.Input
	// Steer, if set, takes what the user sent to steer the running turn: it
	// is logged as their messages before the model's next step.
	Steer func() []string
	// NoModel says no model is called in this session (dsh tool runs the
	// user's own calls): the context's size (ContextUsage) leaves out the system
	// prompt and tool definitions, which only a model request carries, so the
	// status after each call builds no tool's schema.
	NoModel bool
}

// Agent is one session's conversation with the model. Everything it knows about
// the session — the model context, the mode, the remembered approvals, the tools'
// state — is folded from the records it logs, so an agent that folds a reloaded
// log (Fold) knows what the live one knew.
type Agent struct {
	c    Config
	defs func() []provider.ToolDef // the model's tool list, built on first need: their schemas are most of a start's work

	turn sync.Mutex // held by Prompt: one turn at a time

	mu      sync.Mutex // guards the folded state, which calls and mode changes update during a turn
	ctx     builder
	mode    Mode
	model   string // the model and thinking level in force (Config's until a model record)
	think   string
	allowed map[string]bool
	open    map[string]openCall // logged calls without a result yet
	calls   int                 // calls logged, to number the user's own (RunTool)
	// last is the last result logged while RunTool waits for it (direct): a
	// reload does not hold a result (several MiB, maybe) for nobody.
	last   tool.Result
	direct bool
	nested map[string]bool // directories whose instructions are in the context
	system string          // the system prompt (Config's until a header records one)
	cwd    string          // the working directory last logged, relative to the root

	fixed    int64  // the tokens of the system prompt and tools; -1 until needed (fixedLocked)
	fixedGen uint64 // the registry's generation fixed counted

	turnOpts Turn // what the running turn's command changes (PromptTurn, RunAsked)
}

// New returns an agent. The Config's zero limits take their defaults.
func New(c Config) *Agent {
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.Mode == "" || (c.Mode == ModeAuto && !c.Auto) {
		c.Mode = ModeDefault
	}
	reg := c.Registry
	// Built again only when the registry changed (an MCP server's new tools).
	var defsMu sync.Mutex
	var defsOf uint64
	var built bool
	var cached []provider.ToolDef
	defs := func() []provider.ToolDef {
		defsMu.Lock()
		defer defsMu.Unlock()
		tools, gen := reg.Snapshot()
		if built && gen == defsOf {
			return cached
		}
		cached = nil
		for _, t := range tools {
			cached = append(cached, provider.ToolDef{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
		}
		built, defsOf = true, gen
		return cached
	}
	if c.CompactAt <= 0 {
		c.CompactAt = DefaultCompactAt
	}
	if c.Mode == ModeBypass && c.NoBypass != "" {
		c.Mode = ModeDefault
	}
	return &Agent{c: c, defs: defs, ctx: builder{outputCap: c.OutputCap}, mode: c.Mode, model: c.Model, think: c.Thinking,
		allowed: map[string]bool{}, open: map[string]openCall{}, nested: map[string]bool{},
		system: c.System, cwd: ".", fixed: -1}
}

// SetMode changes the permission mode, as a logged record; it applies from the
// next call on, even within a running turn.
func (a *Agent) SetMode(m Mode) error {
	if err := a.Settable(m); err != nil {
		return err
	}
	return a.record(session.Record{Type: session.TypeMode, Mode: string(m)})
}

// Settable says why m may not be set, if it may not: not a mode, auto
// without the sandbox, bypass that a policy turned off.
func (a *Agent) Settable(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	if m == ModeAuto && !a.c.Auto {
		return ErrNoSandbox
	}
	if m == ModeBypass && a.c.NoBypass != "" {
		return BypassOff(a.c.NoBypass)
	}
	return nil
}

// AutoAvailable reports whether the auto mode may be set.
func (a *Agent) AutoAvailable() bool { return a.c.Auto }

// BypassAvailable reports whether the bypass mode may be set.
func (a *Agent) BypassAvailable() bool { return a.c.NoBypass == "" }

// SetModel changes the model and the thinking level, as a logged record, from
// the next model call on.
func (a *Agent) SetModel(model, thinking string) error {
	if model == "" {
		return errors.New("no model given")
	}
	return a.record(session.Record{Type: session.TypeModel, Model: model, Thinking: thinking})
}

// Model returns the model and thinking level in force ("" for the provider's own).
func (a *Agent) Model() (model, thinking string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model, a.think
}

// Allowed are the approvals remembered so far ("always allow"), sorted.
func (a *Agent) Allowed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	keys := make([]string, 0, len(a.allowed))
	for k := range a.allowed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Allow remembers approvals as a logged allow record: a subagent's "always"
// is its parent session's too.
func (a *Agent) Allow(keys []string) error {
	return a.record(session.Record{Type: session.TypeAllow, Keys: keys})
}

// record logs r and folds it.
func (a *Agent) record(r session.Record) error {
	rec, err := a.c.Log.Put(r)
	if err != nil {
		return err
	}
	a.Fold(rec)
	return nil
}

// Fold updates the agent's state with one logged record: the model context, the
// mode, remembered approvals, and (for a tool result) the tools' session state.
// Live, every record the agent logs is folded; a reloaded session folds its log.
func (a *Agent) Fold(r session.Record) {
	a.mu.Lock()
	a.ctx.fold(r)
	var call openCall
	var answered bool
	switch r.Type {
	case session.TypeHeader:
		if r.System != "" {
			a.system, a.fixed = r.System, -1
		}
	case session.TypeModel:
		a.model, a.think = r.Model, r.Thinking
	case session.TypeUser:
		if images := attach.Images(r.Content); len(images) > 0 { // a prompt's images follow its text in the same message
			a.ctx.add(provider.RoleUser, provider.Part{Type: provider.PartImage, Content: images})
		}
	case session.TypeMode:
		// auto from a log written with the sandbox on falls back to asking
		// when this session's commands run without it; bypass too, once a
		// policy turned it off.
		m, err := ParseMode(r.Mode)
		switch {
		case err != nil:
		case m == ModeAuto && !a.c.Auto, m == ModeBypass && a.c.NoBypass != "":
			a.mode = ModeDefault
		default:
			a.mode = m
		}
	case session.TypeAllow:
		for _, k := range r.Keys {
			a.allowed[k] = true
		}
	case session.TypeToolCall:
		a.open[r.CallID] = openCall{name: r.Name, args: r.Args}
		a.calls++
	case session.TypeToolResult:
		call, answered = a.open[r.CallID]
		delete(a.open, r.CallID)
		if r.Result != nil && a.direct {
			a.last = *r.Result
		}
		if r.Cwd != "" {
			a.cwd = r.Cwd
		}
	case session.TypeInstructions:
		a.nested[filepath.Dir(r.Path)] = true
	case session.TypeAssistant, session.TypeThinking,
		session.TypeProgress, session.TypePlan, session.TypeTurnEnd, session.TypeCompaction, session.TypeDamaged, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
	a.mu.Unlock()
	if answered && r.Result != nil && a.c.Tools != nil {
		a.c.Registry.Fold(a.c.Tools, call.name, call.args, *r.Result)
	}
	if r.Type == session.TypeToolResult && r.Cwd != "" {
		a.restoreCwd(r.Cwd)
	}
	if a.c.Folded != nil {
		a.c.Folded(r)
	}
}

// openCall is what the fold of a call's result needs of the call: not its
// whole record, which a reload would copy into the map and out again for
// every call.
type openCall struct {
	name string
	args jsontext.Value
}

// messages is the model context as folded so far.
func (a *Agent) messages() []provider.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ctx.messages()
}

// Mode returns the permission mode.
func (a *Agent) Mode() Mode {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mode
}

// turnState is what one Prompt accumulates.
type turnState struct {
	usage session.Usage
	spent float64 // Config.Spent when the turn began

	errMu  sync.Mutex
	logErr error // the first failed append from a tool's live callbacks

	hookStop   bool // a hook asked for the turn to end (continue: false)
	stopBlocks int  // how often Stop hooks kept the turn going
}

func (t *turnState) noteLogErr(err error) {
	if err == nil {
		return
	}
	t.errMu.Lock()
	if t.logErr == nil {
		t.logErr = err
	}
	t.errMu.Unlock()
}

// Prompt runs one user turn: it logs the prompt, then alternates between the model
// and its tool calls until the model ends its turn, MaxTurns round-trips are used,
// or ctx is cancelled (which returns StopCancelled and a nil error). A model error
// ends the turn with StopError and is returned; so is a failure to write the log.
func (a *Agent) Prompt(ctx context.Context, text string, images ...card.Content) (StopReason, error) {
	return a.PromptTurn(ctx, Turn{}, text, images...)
}

// PromptTurn is Prompt with turn in force until it ends.
func (a *Agent) PromptTurn(ctx context.Context, turn Turn, text string, images ...card.Content) (StopReason, error) {
	if !a.turn.TryLock() {
		return StopError, ErrBusy
	}
	defer a.turn.Unlock()
	defer a.setTurn(turn)()

	if err := a.record(session.Record{Type: session.TypeUser, Text: text, Content: images}); err != nil {
		return StopError, fmt.Errorf("log prompt: %w", err)
	}

	t := &turnState{}
	if a.c.Spent != nil {
		t.spent = a.c.Spent()
	}
	for round := 0; ; round++ {
		if round == a.c.MaxTurns {
			return a.end(t, StopMaxTurns, nil)
		}
		if err := a.autoCompact(ctx, t); err != nil {
			if ctx.Err() != nil {
				return a.end(t, cancelReason(ctx), nil)
			}
			return a.end(t, StopError, err)
		}
		model, thinking := a.turnModel()
		resp, err := a.c.Provider.Stream(ctx, provider.Request{
			Model:     model,
			Thinking:  thinking,
			System:    a.systemPrompt(),
			Messages:  a.messages(),
			Tools:     a.turnTools(),
			MaxTokens: a.c.MaxTokens,
			WebSearch: a.offerSearch(),
		}, a.c.OnDelta)
		if ctx.Err() != nil {
			return a.end(t, cancelReason(ctx), nil)
		}
		if err == nil && resp == nil {
			err = errors.New("no response")
		}
		if err != nil && a.fallback(model, thinking, err) {
			round-- // the round did not happen: the fallback model gets it
			continue
		}
		if err != nil {
			return a.end(t, StopError, fmt.Errorf("model %s: %w", a.c.Provider.Name(), err))
		}
		t.usage.InputTokens += resp.InputTokens
		t.usage.OutputTokens += resp.OutputTokens
		t.usage.ContextTokens = resp.InputTokens + resp.OutputTokens
		cu := session.CallUsage{Model: model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}
		t.usage.Calls = append(t.usage.Calls, cu)

		msg := cleanAssistant(resp.Message)
		a.mu.Lock()
		a.ctx.counted(t.usage.ContextTokens, models.EstimateMessage(msg))
		a.mu.Unlock()
		if a.c.OnUsage != nil { // after the count, so the context's size it is told is the provider's
			a.c.OnUsage(session.Usage{InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, ContextTokens: t.usage.ContextTokens,
				Calls: []session.CallUsage{cu}})
		}
		calls, err := a.logAssistant(msg)
		if err != nil {
			return StopError, err
		}
		if len(calls) == 0 {
			reason := stopOf(resp.StopReason)
			if reason == StopEndTurn {
				more, err := a.stopHooks(ctx, t)
				switch {
				case err != nil:
					return a.end(t, StopError, err)
				case ctx.Err() != nil:
					return a.end(t, cancelReason(ctx), nil)
				case more:
					continue // the hook's reason is in the context now
				}
			}
			return a.end(t, reason, nil)
		}
		if err := a.runCalls(ctx, t, calls); err != nil {
			return a.end(t, StopError, err)
		}
		if ctx.Err() != nil {
			return a.end(t, cancelReason(ctx), nil)
		}
		if t.hookStop {
			return a.end(t, StopEndTurn, nil)
		}
		if a.overBudget(t) || a.overCost(t) {
			return a.end(t, StopBudget, nil)
		}
		if err := a.steered(); err != nil {
			return a.end(t, StopError, err)
		}
	}
}

// RunTool runs one call the user made directly (dsh tool), logged like any
// call but not asked about, and returns its result. An error is a harness or log
// failure.
func (a *Agent) RunTool(ctx context.Context, name string, args []byte) (tool.Result, error) {
	return a.runOne(ctx, Turn{}, call{name: name, args: objectArgs(args), direct: true})
}

// runOne runs one call c outside the model's turn: the user's own (direct:
// not asked about, no hooks) or one their input asked for (aside), with turn
// in force.
func (a *Agent) runOne(ctx context.Context, turn Turn, c call) (tool.Result, error) {
	if !a.turn.TryLock() {
		return tool.Result{}, ErrBusy
	}
	defer a.turn.Unlock()
	defer a.setTurn(turn)()
	a.mu.Lock()
	a.calls++
	c.id = fmt.Sprintf("call-%d", a.calls)
	a.direct = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.last, a.direct = tool.Result{}, false
		a.mu.Unlock()
	}()
	c.tool, _ = a.c.Registry.Get(c.name)
	ts := &turnState{}
	if err := a.runCalls(ctx, ts, []call{c}); err != nil {
		return tool.Result{}, err
	}
	if ts.logErr != nil {
		return tool.Result{}, fmt.Errorf("log: %w", ts.logErr)
	}
	a.mu.Lock()
	res := a.last
	a.mu.Unlock()
	return res, nil
}

// end logs the turn_end record and returns what Prompt returns.
func (a *Agent) end(t *turnState, reason StopReason, cause error) (StopReason, error) {
	u := t.usage
	rec := session.Record{Type: session.TypeTurnEnd, StopReason: string(reason), Usage: &u}
	if cause != nil {
		rec.Error = cause.Error()
	}
	if err := a.record(rec); err != nil {
		return StopError, errors.Join(cause, fmt.Errorf("log turn end: %w", err))
	}
	if t.logErr != nil {
		return StopError, errors.Join(cause, fmt.Errorf("log: %w", t.logErr))
	}
	return reason, cause
}

func stopOf(r provider.StopReason) StopReason {
	switch r {
	case provider.StopEndTurn, provider.StopToolUse:
		return StopEndTurn
	case provider.StopMaxTokens:
		return StopMaxTokens
	case provider.StopRefusal:
		return StopRefusal
	}
	return StopEndTurn
}

// cleanAssistant drops parts that carry nothing: an empty block is not worth a
// record.
func cleanAssistant(m provider.Message) provider.Message {
	out := provider.Message{Role: provider.RoleAssistant}
	for _, p := range m.Parts {
		switch p.Type {
		case provider.PartText:
			if p.Text == "" {
				continue
			}
			out.Parts = append(out.Parts, provider.Part{Type: p.Type, Text: p.Text})
		case provider.PartThinking:
			if p.Text == "" && p.Signature == "" {
				continue
			}
			out.Parts = append(out.Parts, provider.Part{Type: p.Type, Text: p.Text, Signature: p.Signature})
		case provider.PartToolUse:
			out.Parts = append(out.Parts, provider.Part{Type: p.Type, ID: p.ID, Name: p.Name, Args: objectArgs(p.Args)})
		case provider.PartWebSearch:
			out.Parts = append(out.Parts, p)
		case provider.PartToolResult, provider.PartImage:
			// not something an assistant says; dropped
		}
	}
	return out
}

// invalidArgsKey wraps arguments that are not a JSON object. The log and the APIs
// need an object; the tool's strict decoding then refuses the call, naming the key.
const invalidArgsKey = "invalid_arguments"

// objectArgs returns args compacted if they are a JSON object, "{}" if empty, and otherwise
// an object that holds them as a string under invalidArgsKey.
func objectArgs(args jsontext.Value) jsontext.Value {
	if len(bytes.TrimSpace(args)) == 0 {
		return jsontext.Value("{}")
	}
	if args.IsValid() && args.Kind() == '{' {
		v := args.Clone()
		if err := v.Compact(); err == nil {
			return v // as the log will hold it, so Restore gives back the same bytes
		}
	}
	b, err := json.Marshal(map[string]string{invalidArgsKey: strings.ToValidUTF8(string(args), "\uFFFD")})
	if err != nil {
		return jsontext.Value("{}")
	}
	return b
}

// call is one tool call of an assistant message.
type call struct {
	id, name  string
	continues bool // not the message's first call
	direct    bool // the user's own call (dsh tool): no permission step
	aside     bool // run for the user's input before its prompt (RunAsked): its output is in the prompt
	ask       bool // asked about whatever the mode says (an untrusted repository's command's)
	args      jsontext.Value
	tool      tool.Tool // nil for an unknown tool; Registry.Run explains
	preview   jsontext.Value
}

// logAssistant logs the message's text and thinking in order and returns its
// tool calls, which runCalls logs one by one as their turn comes: a call's
// preview is computed just before it is asked about, after the calls before it
// ran (two edits of one file in one message each show what they will do).
func (a *Agent) logAssistant(m provider.Message) ([]call, error) {
	var calls []call
	for _, p := range m.Parts {
		var rec session.Record
		switch p.Type {
		case provider.PartText:
			rec = session.Record{Type: session.TypeAssistant, Text: p.Text}
		case provider.PartThinking:
			rec = session.Record{Type: session.TypeThinking, Text: p.Text, Signature: p.Signature}
		case provider.PartToolUse:
			t, _ := a.c.Registry.Get(p.Name)
			calls = append(calls, call{id: p.ID, name: p.Name, args: p.Args, tool: t, continues: len(calls) > 0})
			continue
		case provider.PartWebSearch:
			if err := a.logSearch(p); err != nil {
				return nil, err
			}
			continue
		case provider.PartToolResult, provider.PartImage:
			continue
		}
		if err := a.record(rec); err != nil {
			return nil, fmt.Errorf("log assistant message: %w", err)
		}
	}
	return calls, nil
}

// logCall logs a call as it comes up to run.
func (a *Agent) logCall(c call) error {
	if err := a.record(session.Record{Type: session.TypeToolCall, CallID: c.id, Name: c.name, Args: c.args, Preview: c.preview, Continues: c.continues, Aside: c.aside}); err != nil {
		return fmt.Errorf("log tool call: %w", err)
	}
	return nil
}

// outcome is a finished call.
type outcome struct {
	res       tool.Result
	ran       bool // it was executed (a cancelled one returned what it had)
	cancelled bool
	err       error // a harness failure
}

// runCalls logs, permits and executes the calls and logs their results in call
// order. Runs of consecutive read-only calls execute concurrently; every other
// call runs alone, in order. Once ctx is cancelled, every call that has not
// finished is logged as cancelled; one that was running keeps what it returned
// (a command's output so far). A harness failure ends the turn.
func (a *Agent) runCalls(ctx context.Context, t *turnState, calls []call) error {
	for i := 0; i < len(calls); {
		j := i + 1
		if readOnly(calls[i]) {
			for j < len(calls) && readOnly(calls[j]) {
				j++
			}
		}
		group := calls[i:j]
		outs := make([]outcome, len(group))
		run := make([]bool, len(group))
		for k := range group {
			c := &group[k]
			if ctx.Err() != nil {
				if err := a.logCall(*c); err != nil {
					return err
				}
				outs[k] = outcome{cancelled: true}
				continue
			}
			// The call's hooks run before it is logged: one may change its
			// input, and the call logged (and shown) is the one that runs.
			denied, hook, ok, runs := a.preToolUse(ctx, t, c)
			granted := false
			if ok && ctx.Err() == nil {
				var more []session.Hook
				denied, granted, ok, more = a.permissionRequest(ctx, t, c, hook)
				runs = append(runs, more...)
			}
			var fail *tool.Result
			if res, ok := a.hidden(*c); ok {
				fail = &res
			} else if c.tool != nil {
				c.preview, fail = c.tool.Preview(ctx, a.env(t, *c), c.args)
			}
			if err := a.logCall(*c); err != nil {
				return err
			}
			if err := a.logHooks(runs); err != nil {
				return err
			}
			switch {
			case ctx.Err() != nil:
				outs[k] = outcome{cancelled: true}
				continue
			case !ok:
				outs[k] = outcome{res: denied}
				continue
			case fail != nil:
				outs[k] = outcome{res: *fail}
				continue
			}
			if c.ask {
				hook = "ask"
			}
			// A direct call is the user's own (dsh tool, !cmd): nothing to ask.
			res, ok, err := tool.Result{}, true, error(nil)
			if !c.direct {
				res, ok, err = a.permit(ctx, *c, hook, granted)
			}
			switch {
			case err != nil:
				return err
			case ctx.Err() != nil:
				outs[k] = outcome{cancelled: true}
			case !ok:
				outs[k] = outcome{res: res}
			default:
				run[k] = true
			}
		}
		// A group of one runs on this goroutine: most calls come alone, and a
		// goroutine for one is only a hand-off there and back.
		var wg sync.WaitGroup
		alone := len(group) == 1
		// Told started in the calls' order: those of a group start together.
		for k, c := range group {
			if run[k] && a.c.OnCallStart != nil {
				a.c.OnCallStart(c.id)
			}
		}
		for k, c := range group {
			switch {
			case !run[k]:
			case alone:
				outs[k] = a.execute(ctx, t, c)
			default:
				wg.Go(func() { outs[k] = a.execute(ctx, t, c) })
			}
		}
		wg.Wait()
		for k, c := range group {
			o := outs[k]
			if o.err != nil {
				return o.err
			}
			res := o.res
			switch {
			case o.cancelled && !o.ran:
				res = tool.Refused(msgCancelled, "Cancelled before it ran.")
			case o.cancelled:
				res.IsError = true
				if !strings.Contains(res.TextOf(), "ancelled") {
					res.Content = append(res.Content, card.Text("\n"+msgCancelled))
				}
			}
			if err := a.record(session.Record{Type: session.TypeToolResult, CallID: c.id, Result: &res, Cwd: a.movedCwd()}); err != nil {
				return fmt.Errorf("log tool result: %w", err)
			}
			if err := a.nestedInstructions(c, res); err != nil {
				return err
			}
			if o.ran {
				if err := a.afterCall(ctx, t, c, res, o.cancelled); err != nil {
					return err
				}
			}
		}
		i = j
	}
	return nil
}

func readOnly(c call) bool {
	if c.tool == nil {
		return false
	}
	if per, ok := c.tool.(interface{ ReadOnlyCall(args []byte) bool }); ok {
		return per.ReadOnlyCall(c.args)
	}
	return c.tool.ReadOnly()
}

// env is a call's tool environment, its live channels wired to the log.
func (a *Agent) env(t *turnState, c call) tool.Env {
	id := c.id
	mode := a.Mode()
	env := tool.Env{
		Session: a.c.Tools,
		CallID:  id,
		Progress: func(chunk string) {
			t.noteLogErr(a.record(session.Record{Type: session.TypeProgress, CallID: id, Chunk: chunk}))
		},
		Plan: func(p []tool.PlanEntry) {
			t.noteLogErr(a.record(session.Record{Type: session.TypePlan, Plan: p}))
		},
		SetMode: func(m string) error {
			mode, err := ParseMode(m)
			if err != nil {
				return err
			}
			return a.SetMode(mode)
		},
		AutoMode:     a.c.Auto,
		ReadOnlyMode: mode == ModeReadOnly || mode == ModePlan,
		Mode:         string(mode),
	}
	if a.c.Ask != nil {
		env.Ask = func(ctx context.Context, q tool.Question) (card.Answer, error) {
			if err := a.notify(ctx, "dsh has a question for you: "+q.Text, "elicitation_dialog"); err != nil {
				return card.Answer{}, err
			}
			cc, _ := view.CallCard(a.c.Registry, session.Record{Type: session.TypeToolCall, CallID: c.id, Name: c.name, Args: c.args, Preview: c.preview})
			return a.c.Ask(ctx, QuestionRequest{CallID: c.id, Tool: c.name, Card: cc, Question: q})
		}
	}
	return env
}

// execute runs one permitted call.
func (a *Agent) execute(ctx context.Context, t *turnState, c call) outcome {
	if a.c.Effect != nil && c.tool != nil && !readOnly(c) && c.tool.Permission() != tool.PermNone {
		ap := c.tool.Approval(c.args)
		files := c.tool.Permission() == tool.PermEdit && !ap.Opaque && len(ap.Paths) > 0
		if files {
			real := make([]string, len(ap.Paths))
			for i, p := range ap.Paths {
				real[i] = a.realPath(p)
			}
			a.c.Effect(ctx, real, false)
		} else {
			a.c.Effect(ctx, nil, true)
		}
	}
	res, err := a.c.Registry.Run(ctx, a.env(t, c), c.name, c.args, c.preview)
	if err != nil {
		return outcome{err: fmt.Errorf("running %s: %w", c.name, err)}
	}
	// A call that returns after a cancel was interrupted: what it returned is partial.
	return outcome{res: res, ran: true, cancelled: ctx.Err() != nil}
}

// A verdict is what the mode, the hooks and earlier approvals decide about a
// call before anyone is asked.
type verdict int

const (
	verdictAsk verdict = iota
	verdictRun
	verdictRefuse
)

// verdict is permit's decision without asking: run, refuse (with res), or ask
// (about ap, a call of permission perm).
func (a *Agent) verdict(c call, hook string) (v verdict, res tool.Result, perm tool.Permission, ap tool.Approval) {
	if c.tool == nil {
		return verdictRun, tool.Result{}, perm, ap // Registry.Run answers with the list of real tools
	}
	perm = c.tool.Permission()
	a.mu.Lock()
	mode := a.mode
	a.mu.Unlock()
	ap = c.tool.Approval(c.args)
	// The user's rules first: a deny holds in every mode; ask and allow
	// count as a hook's would.
	denied, ruled := a.ruleGate(c, ap)
	if denied != nil {
		return verdictRefuse, *denied, perm, ap
	}
	hook = stronger(hook, ruled)
	r := a.pathRisk(ap.Paths)
	if why := r.reason(); why != "" {
		// Asked every time: no earlier "always" covers it.
		ap = tool.Approval{Label: why}
	}
	switch modeGate(mode, perm, ap, r) {
	case gateRun:
		if hook != "ask" {
			return verdictRun, tool.Result{}, perm, ap
		}
	case gateRefuse:
		if mode == ModePlan {
			return verdictRefuse, tool.Refused(fmt.Sprintf("This session is in plan mode, so %s (which changes files or runs commands) was not run. "+
				"Explore with tools that only read, search or fetch, then present your plan with the plan tool.", c.name),
				"Not run: in plan mode only what reads runs, until you approve a plan."), perm, ap
		}
		return verdictRefuse, tool.Refused(fmt.Sprintf("This session is in read-only mode, so %s (which changes files or runs commands) was not run. "+
			"Continue with tools that only read, or ask the user to change the mode.", c.name),
			"Not run: the session is in read-only mode (/mode changes it)."), perm, ap
	case gateAsk:
		// A risky path (inside .git, a file that steers later sessions,
		// outside the workspace) is asked about every time, whatever a hook
		// says, as whatever "always" says; so is it whatever the running
		// command's allowed-tools say.
		if (hook == "allow" || hook == "" && a.preApproved(c)) && r.reason() == "" {
			return verdictRun, tool.Result{}, perm, ap
		}
	}
	if hook != "ask" && (ap.Safe || (ap.Remember && len(ap.Keys) > 0 && a.allAllowed(ap.Keys))) {
		return verdictRun, tool.Result{}, perm, ap
	}
	return verdictAsk, tool.Result{}, perm, ap
}

// wouldAsk says permit would ask the user about c: when PermissionRequest
// hooks run.
func (a *Agent) wouldAsk(c call, hook string) bool {
	v, _, _, _ := a.verdict(c, hook)
	return v == verdictAsk && a.c.Permit != nil
}

// permit decides whether a call may run, asking the user when the mode says so.
// When it may not, res is the error result the model gets; err is a failure to
// log a remembered approval.
//
// hook is what the call's PreToolUse hooks decided: allow runs it without
// asking and ask asks even where the mode would not, as in Claude Code; no
// hook lifts the refusals of the read-only and plan modes, nor the question
// about a risky path. granted says a PermissionRequest hook answered the
// question for the user, yes.
func (a *Agent) permit(ctx context.Context, c call, hook string, granted bool) (res tool.Result, ok bool, err error) {
	v, res, perm, ap := a.verdict(c, hook)
	switch {
	case v == verdictRun:
		return tool.Result{}, true, nil
	case v == verdictRefuse:
		return res, false, nil
	case granted && a.pathRisk(c.tool.Approval(c.args).Paths).reason() == "":
		return tool.Result{}, true, nil
	}
	if a.c.Permit == nil {
		return tool.Refused(fmt.Sprintf("%s needs the user's permission in %s mode, and there is no one to ask. The call was not run.", c.name, a.Mode()),
			fmt.Sprintf("Not run: in %s mode it needs your permission, and there was no one to ask.", a.Mode())), false, nil
	}
	// A presenter that panics must not take the turn down: the request shows the
	// generic card, as the consumers' presenters show the call (and report it).
	cc, _ := view.CallCard(a.c.Registry, session.Record{Type: session.TypeToolCall, CallID: c.id, Name: c.name, Args: c.args, Preview: c.preview})
	if err := a.notify(ctx, "dsh needs your permission to use "+c.name, "permission_prompt"); err != nil {
		return tool.Result{}, false, err
	}
	d, perr := a.c.Permit(ctx, PermissionRequest{CallID: c.id, Tool: c.name, Args: c.args, Card: cc, Permission: perm, Approval: ap})
	if perr != nil {
		return tool.Errorf("Could not ask the user for permission (%v). The call was not run.", perr), false, nil
	}
	switch d {
	case AllowOnce:
		return tool.Result{}, true, nil
	case AllowAlways:
		if ap.Remember && len(ap.Keys) > 0 {
			if err := a.record(session.Record{Type: session.TypeAllow, Keys: ap.Keys}); err != nil {
				return tool.Result{}, false, fmt.Errorf("log approval: %w", err)
			}
		}
		return tool.Result{}, true, nil
	case Reject:
	}
	return tool.Refused(msgRejected, "Not run: you said no."), false, nil
}

func (a *Agent) allAllowed(keys []string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		if !a.allowed[k] {
			return false
		}
	}
	return true
}

// capContent cuts a result's text to limit characters for the model, keeping the
// head and the tail (where tools put their summaries and "resume at" footers).
func capContent(content []card.Content, limit int) []card.Content {
	byteLen := 0
	for _, c := range content {
		if c.Type == "text" {
			byteLen += len(c.Text)
		}
	}
	if byteLen <= limit { // no more characters than bytes: nothing to count (a reload folds every result)
		return content
	}
	total := 0
	for _, c := range content {
		if c.Type == "text" {
			total += utf8.RuneCountInString(c.Text)
		}
	}
	if total <= limit {
		return content
	}
	// Passes over the runes, keeping the first head and the last tail: a
	// multi-megabyte output costs the cut, not a rune slice of it (invalid bytes
	// become U+FFFD, as a rune conversion would make them). The first pass sizes
	// the cut exactly: the context holds it for as long as the session lives.
	head, tail := limit/2, limit-limit/2
	note := fmt.Sprintf("\n\n… %d characters omitted (the output was capped at %d) …\n\n", total-limit, limit)
	kept := func(write func(r rune)) {
		k := 0
		for _, c := range content {
			if c.Type != "text" {
				continue
			}
			for _, r := range c.Text {
				if k < head || k >= total-tail {
					write(r)
				}
				k++
			}
		}
	}
	size := len(note)
	kept(func(r rune) { size += utf8.RuneLen(r) })
	var b strings.Builder
	b.Grow(size)
	k := 0
	kept(func(r rune) {
		if k == head {
			b.WriteString(note)
		}
		b.WriteRune(r)
		k++
	})
	var rest []card.Content
	for _, c := range content {
		if c.Type != "text" {
			rest = append(rest, c)
		}
	}
	return append([]card.Content{card.Text(b.String())}, rest...)
}
