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
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// StopReason says why a turn ended; it is also the turn_end record's stopReason.
type StopReason string

// The stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"   // the model finished
	StopMaxTokens StopReason = "max_tokens" // the model ran out of output tokens
	StopRefusal   StopReason = "refusal"    // the model declined
	StopMaxTurns  StopReason = "max_turns"  // Config.MaxTurns model round-trips were used up
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

// Config is what an Agent needs.
type Config struct {
	Provider provider.Provider
	Registry *tool.Registry
	Log      *session.Log
	Tools    *tool.Session

	Model     string
	MaxTokens int // per model response; 0 means DefaultMaxTokens
	MaxTurns  int // model round-trips per prompt; 0 means DefaultMaxTurns
	Mode      Mode
	Permit    Permitter // asked in modes that ask; nil means nobody can be asked
	System    string    // the full system prompt; build it with SystemPrompt
	// OnDelta, if set, receives the model's text and thinking as they stream.
	OnDelta func(provider.Delta)
	// OnCallStart, if set, is told when a permitted call begins to run — the
	// moment between its tool_call and tool_result records that the log does
	// not hold, which a UI shows as "in progress".
	OnCallStart func(callID string)
	// OutputCap is how many characters of a tool's output the model gets; the log
	// keeps all the tool returned. 0 means DefaultOutputCap.
	OutputCap int
}

// Agent is one session's conversation with the model.
type Agent struct {
	c    Config
	defs []provider.ToolDef

	turn sync.Mutex // held by Prompt and Restore: one turn at a time
	msgs []provider.Message

	mu      sync.Mutex // guards mode and allowed, which change during a turn
	mode    Mode
	allowed map[string]bool
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
	if c.Mode == "" {
		c.Mode = ModeDefault
	}
	var defs []provider.ToolDef
	for _, t := range c.Registry.Tools() {
		defs = append(defs, provider.ToolDef{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	return &Agent{c: c, defs: defs, mode: c.Mode, allowed: map[string]bool{}}
}

// SetMode changes the permission mode; it applies from the next call on, even
// within a running turn.
func (a *Agent) SetMode(m Mode) {
	a.mu.Lock()
	a.mode = m
	a.mu.Unlock()
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

	errMu  sync.Mutex
	logErr error // the first failed append from a tool's live callbacks
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
func (a *Agent) Prompt(ctx context.Context, text string) (StopReason, error) {
	if !a.turn.TryLock() {
		return StopError, ErrBusy
	}
	defer a.turn.Unlock()

	if err := a.c.Log.Append(session.Record{Type: session.TypeUser, Text: text}); err != nil {
		return StopError, fmt.Errorf("log prompt: %w", err)
	}
	a.push(provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: text}}})

	t := &turnState{}
	for round := 0; ; round++ {
		if round == a.c.MaxTurns {
			return a.end(t, StopMaxTurns, nil)
		}
		resp, err := a.c.Provider.Stream(ctx, provider.Request{
			Model:     a.c.Model,
			System:    a.c.System,
			Messages:  a.msgs,
			Tools:     a.defs,
			MaxTokens: a.c.MaxTokens,
		}, a.c.OnDelta)
		if ctx.Err() != nil {
			return a.end(t, StopCancelled, nil)
		}
		if err == nil && resp == nil {
			err = errors.New("no response")
		}
		if err != nil {
			return a.end(t, StopError, fmt.Errorf("model %s: %w", a.c.Provider.Name(), err))
		}
		t.usage.InputTokens += resp.InputTokens
		t.usage.OutputTokens += resp.OutputTokens

		msg := cleanAssistant(resp.Message)
		calls, err := a.logAssistant(msg)
		if err != nil {
			return StopError, err
		}
		if len(msg.Parts) > 0 {
			a.push(msg)
		}
		if len(calls) == 0 {
			return a.end(t, stopOf(resp.StopReason), nil)
		}

		results, err := a.runCalls(ctx, t, calls)
		if err != nil {
			return StopError, err
		}
		parts := make([]provider.Part, len(calls))
		for i, c := range calls {
			parts[i] = provider.Part{Type: provider.PartToolResult, ID: c.id, Content: capContent(results[i].Content, a.c.OutputCap), IsError: results[i].IsError}
		}
		a.push(provider.Message{Role: provider.RoleUser, Parts: parts})
		if ctx.Err() != nil {
			return a.end(t, StopCancelled, nil)
		}
	}
}

// end logs the turn_end record and returns what Prompt returns.
func (a *Agent) end(t *turnState, reason StopReason, cause error) (StopReason, error) {
	rec := session.Record{Type: session.TypeTurnEnd, StopReason: string(reason), Usage: &session.Usage{
		InputTokens: t.usage.InputTokens, OutputTokens: t.usage.OutputTokens,
	}}
	if cause != nil {
		rec.Error = cause.Error()
	}
	if err := a.c.Log.Append(rec); err != nil {
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

// push appends a message, merging it into the last one when the roles repeat (a
// cancelled stream leaves a user message unanswered; the APIs want alternation).
func (a *Agent) push(m provider.Message) {
	if n := len(a.msgs); n > 0 && a.msgs[n-1].Role == m.Role {
		last := &a.msgs[n-1]
		last.Parts = append(last.Parts[:len(last.Parts):len(last.Parts)], m.Parts...)
		return
	}
	a.msgs = append(a.msgs, m)
}

// cleanAssistant drops parts that carry nothing, so the live context is exactly
// what Restore rebuilds from the log.
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
		case provider.PartToolResult:
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
	id, name string
	args     jsontext.Value
	tool     tool.Tool // nil for an unknown tool; Registry.Run explains
}

// logAssistant logs the message's parts in order and returns its tool calls.
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
			rec = session.Record{Type: session.TypeToolCall, CallID: p.ID, Name: p.Name, Args: p.Args}
			t, _ := a.c.Registry.Get(p.Name)
			calls = append(calls, call{id: p.ID, name: p.Name, args: p.Args, tool: t})
		case provider.PartToolResult:
			continue
		}
		if err := a.c.Log.Append(rec); err != nil {
			return nil, fmt.Errorf("log assistant message: %w", err)
		}
	}
	return calls, nil
}

// outcome is a finished call.
type outcome struct {
	res       tool.Result
	cancelled bool
}

// runCalls permits and executes the calls and logs their results in call order.
// Runs of consecutive read-only calls execute concurrently; every other call runs
// alone, in order. Once ctx is cancelled, every call that has not finished is
// logged as cancelled.
func (a *Agent) runCalls(ctx context.Context, t *turnState, calls []call) ([]tool.Result, error) {
	results := make([]tool.Result, 0, len(calls))
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
		for k, c := range group {
			if ctx.Err() != nil {
				outs[k] = outcome{cancelled: true}
				continue
			}
			res, ok := a.permit(ctx, c)
			if ctx.Err() != nil {
				outs[k] = outcome{cancelled: true}
				continue
			}
			if !ok {
				outs[k] = outcome{res: res}
				continue
			}
			run[k] = true
		}
		var wg sync.WaitGroup
		for k, c := range group {
			if run[k] {
				wg.Go(func() { outs[k] = a.execute(ctx, t, c) })
			}
		}
		wg.Wait()
		for k, c := range group {
			res := outs[k].res
			if outs[k].cancelled {
				res = tool.Errorf(msgCancelled)
			}
			if err := a.c.Log.Append(session.Record{Type: session.TypeToolResult, CallID: c.id, Result: &res}); err != nil {
				return nil, fmt.Errorf("log tool result: %w", err)
			}
			results = append(results, res)
		}
		i = j
	}
	return results, nil
}

func readOnly(c call) bool { return c.tool != nil && c.tool.ReadOnly() }

// execute runs one permitted call with its live channels wired to the log.
func (a *Agent) execute(ctx context.Context, t *turnState, c call) outcome {
	env := tool.Env{
		Session: a.c.Tools,
		Progress: func(chunk string) {
			t.noteLogErr(a.c.Log.Append(session.Record{Type: session.TypeProgress, CallID: c.id, Chunk: chunk}))
		},
		Plan: func(p []tool.PlanEntry) {
			t.noteLogErr(a.c.Log.Append(session.Record{Type: session.TypePlan, Plan: p}))
		},
	}
	if a.c.OnCallStart != nil {
		a.c.OnCallStart(c.id)
	}
	res, err := a.c.Registry.Run(ctx, env, c.name, c.args, nil)
	if err != nil {
		res = tool.Errorf("dsh failed to run this call: %v", err)
	}
	// A call that returns after a cancel was interrupted: what it returned is partial.
	return outcome{res: res, cancelled: ctx.Err() != nil}
}

// permit decides whether a call may run, asking the user when the mode says so.
// When it may not, res is the error result the model gets.
func (a *Agent) permit(ctx context.Context, c call) (res tool.Result, ok bool) {
	if c.tool == nil {
		return tool.Result{}, true // Registry.Run answers with the list of real tools
	}
	perm := c.tool.Permission()
	a.mu.Lock()
	mode := a.mode
	a.mu.Unlock()
	switch modeGate(mode, perm) {
	case gateRun:
		return tool.Result{}, true
	case gateRefuse:
		return tool.Errorf("This session is in read-only mode, so %s (which changes files or runs commands) was not run. "+
			"Continue with tools that only read, or ask the user to change the mode.", c.name), false
	case gateAsk:
	}

	cc := a.c.Registry.PresentCall(c.name, c.args, nil)
	keys, rememberable := allowKeys(c.name, c.args, cc, perm)
	if rememberable && a.allAllowed(keys) {
		return tool.Result{}, true
	}
	if a.c.Permit == nil {
		return tool.Errorf("%s needs the user's permission in %s mode, and there is no one to ask. The call was not run.", c.name, mode), false
	}
	d, err := a.c.Permit(ctx, PermissionRequest{CallID: c.id, Tool: c.name, Args: c.args, Card: cc, Permission: perm})
	if err != nil {
		return tool.Errorf("Could not ask the user for permission (%v). The call was not run.", err), false
	}
	switch d {
	case AllowOnce:
		return tool.Result{}, true
	case AllowAlways:
		if rememberable {
			a.allow(keys)
		}
		return tool.Result{}, true
	case Reject:
	}
	return tool.Errorf(msgRejected), false
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

func (a *Agent) allow(keys []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		a.allowed[k] = true
	}
}

// capContent cuts a result's text to limit characters for the model, keeping the
// head and the tail (where tools put their summaries and "resume at" footers).
func capContent(content []card.Content, limit int) []card.Content {
	total := 0
	for _, c := range content {
		if c.Type == "text" {
			total += len([]rune(c.Text))
		}
	}
	if total <= limit {
		return content
	}
	var text []rune
	var rest []card.Content
	for _, c := range content {
		if c.Type == "text" {
			text = append(text, []rune(c.Text)...)
		} else {
			rest = append(rest, c)
		}
	}
	head, tail := limit/2, limit-limit/2
	capped := string(text[:head]) +
		fmt.Sprintf("\n\n… %d characters omitted (the output was capped at %d) …\n\n", total-limit, limit) +
		string(text[len(text)-tail:])
	return append([]card.Content{card.Text(capped)}, rest...)
}
