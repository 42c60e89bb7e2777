package telemetry

import (
	"context"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys: OpenTelemetry's GenAI conventions where they have one,
// dsh's own otherwise.
const (
	keySession      = attribute.Key("gen_ai.conversation.id")
	keyOperation    = attribute.Key("gen_ai.operation.name")
	keyModel        = attribute.Key("gen_ai.request.model")
	keyInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	keyToolName     = attribute.Key("gen_ai.tool.name")
	keyToolCall     = attribute.Key("gen_ai.tool.call.id")
	keyCost         = attribute.Key("dsh.cost_usd")
	keyUnpriced     = attribute.Key("dsh.cost_unknown")
	keyPromptChars  = attribute.Key("dsh.prompt.chars")
	keyPromptImages = attribute.Key("dsh.prompt.images")
	keyPrompt       = attribute.Key("dsh.prompt.text")
	keyStop         = attribute.Key("dsh.stop_reason")
	keyArgsBytes    = attribute.Key("dsh.tool.args_bytes")
	keyArgs         = attribute.Key("dsh.tool.args")
	keyResultChars  = attribute.Key("dsh.tool.result_chars")
	keyResult       = attribute.Key("dsh.tool.result")
	keyDecision     = attribute.Key("dsh.tool.decision")
	keyAsked        = attribute.Key("dsh.tool.asked")
	keyAgent        = attribute.Key("dsh.agent")
	keyText         = attribute.Key("dsh.text")
)

// The decisions a tool span records.
const (
	DecisionAllowed = "allowed" // it ran without asking (mode, rule, earlier approval)
	DecisionAsked   = "asked"   // it ran after the user said yes
	DecisionDenied  = "denied"  // it did not run: the user, a rule, a hook or the mode said no, or the turn was cancelled first
)

// contentCap bounds each text DSH_OTEL_CONTENT adds: a span is not a transcript.
const contentCap = 4096

// Trace turns one session's events into spans: a turn span for each prompt,
// under it a span for each model call and each tool call, and under a task
// call the subagent's own turn. It is driven from one goroutine (the
// session's subscriber) and holds no lock.
type Trace struct {
	e       *Exporter
	session string
	agent   string
	parent  context.Context // a subagent's: its task call's span

	turn     trace.Span
	turnCtx  context.Context
	model    trace.Span
	calls    map[string]*toolSpan
	children map[string]*Trace
}

type toolSpan struct {
	span       trace.Span
	ctx        context.Context
	asked, ran bool
}

// Session starts following the session id.
func (e *Exporter) Session(id string) *Trace {
	return &Trace{e: e, session: id, parent: context.Background(), calls: map[string]*toolSpan{}}
}

// Child is the trace of the subagent session child that the task call
// callID runs; its spans nest under the call's.
func (t *Trace) Child(callID, child, agent string) *Trace {
	if c, ok := t.children[child]; ok {
		return c
	}
	parent := t.ctx()
	if c, ok := t.calls[callID]; ok {
		parent = c.ctx
	}
	c := &Trace{e: t.e, session: child, agent: agent, parent: parent, calls: map[string]*toolSpan{}}
	if t.children == nil {
		t.children = map[string]*Trace{}
	}
	t.children[child] = c
	return c
}

// ctx is where a model or tool span goes: under the turn, else under the
// parent (a direct call of dsh tool, a /compact).
func (t *Trace) ctx() context.Context {
	if t.turn != nil {
		return t.turnCtx
	}
	return t.parent
}

func (t *Trace) start(ctx context.Context, name string, at time.Time, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	attrs = append(attrs, keySession.String(t.session))
	if t.agent != "" {
		attrs = append(attrs, keyAgent.String(t.agent))
	}
	return t.e.tracer.Start(ctx, name, trace.WithTimestamp(at), trace.WithAttributes(attrs...))
}

// Prompt is the user's prompt, as typed (its characters, and images
// attached): a turn starts. A prompt given while a turn runs steers it.
func (t *Trace) Prompt(at time.Time, text string, images int) {
	attrs := []attribute.KeyValue{keyPromptChars.Int(utf8.RuneCountInString(text)), keyPromptImages.Int(images)}
	if t.e.content {
		attrs = append(attrs, keyPrompt.String(capText(text)))
	}
	if t.turn != nil {
		t.turn.AddEvent("steer", trace.WithTimestamp(at), trace.WithAttributes(attrs...))
		return
	}
	attrs = append(attrs, keyOperation.String("invoke_agent"))
	t.turnCtx, t.turn = t.start(t.parent, "turn", at, attrs...)
}

// Assistant is text the model wrote: with DSH_OTEL_CONTENT=1, an event of
// the turn.
func (t *Trace) Assistant(at time.Time, text string) {
	if t.e.content && t.turn != nil {
		t.turn.AddEvent("assistant", trace.WithTimestamp(at), trace.WithAttributes(keyText.String(capText(text))))
	}
}

// ModelRequest is a model call starting. One still open got no answer.
func (t *Trace) ModelRequest(at time.Time) {
	t.endModel(at, "no response")
	_, t.model = t.start(t.ctx(), "chat", at, keyOperation.String("chat"))
}

// ModelCall is what a model call that ended used; cost is in US dollars,
// priced false when the model's price is not known.
type ModelCall struct {
	Model        string
	InputTokens  int64
	OutputTokens int64
	Cost         float64
	Priced       bool
}

// ModelDone ends the model call with what it used. Without a call open (a
// subagent's calls are known only from its turn's end) the span is the
// moment it is known.
func (t *Trace) ModelDone(at time.Time, m ModelCall) {
	if t.model == nil {
		_, t.model = t.start(t.ctx(), "chat", at, keyOperation.String("chat"))
	}
	if m.Model != "" {
		t.model.SetName("chat " + m.Model)
		t.model.SetAttributes(keyModel.String(m.Model))
	}
	t.model.SetAttributes(keyInputTokens.Int64(m.InputTokens), keyOutputTokens.Int64(m.OutputTokens))
	if m.Priced {
		t.model.SetAttributes(keyCost.Float64(m.Cost))
	} else {
		t.model.SetAttributes(keyUnpriced.Bool(true))
	}
	t.model.End(trace.WithTimestamp(at))
	t.model = nil
}

func (t *Trace) endModel(at time.Time, why string) {
	if t.model == nil {
		return
	}
	t.model.SetStatus(codes.Error, why)
	t.model.End(trace.WithTimestamp(at))
	t.model = nil
}

// Call is a tool call logged as it comes up to run, before its permission.
func (t *Trace) Call(at time.Time, id, name string, args []byte) {
	attrs := []attribute.KeyValue{keyOperation.String("execute_tool"), keyToolName.String(name), keyToolCall.String(id), keyArgsBytes.Int(len(args))}
	if t.e.content {
		attrs = append(attrs, keyArgs.String(capText(string(args))))
	}
	ctx, span := t.start(t.ctx(), "execute_tool "+name, at, attrs...)
	t.calls[id] = &toolSpan{span: span, ctx: ctx}
}

// Asked says the user was asked about the call.
func (t *Trace) Asked(at time.Time, id string) {
	if c, ok := t.calls[id]; ok {
		c.asked = true
		c.span.AddEvent("permission asked", trace.WithTimestamp(at))
	}
}

// Started says the call was permitted and runs.
func (t *Trace) Started(at time.Time, id string) {
	if c, ok := t.calls[id]; ok {
		c.ran = true
		c.span.AddEvent("started", trace.WithTimestamp(at))
	}
}

// Result ends the call: its decision, its result's size and whether it
// failed.
func (t *Trace) Result(at time.Time, id string, isError bool, text string) {
	c, ok := t.calls[id]
	if !ok {
		return
	}
	delete(t.calls, id)
	decision := DecisionDenied
	switch {
	case c.ran && c.asked:
		decision = DecisionAsked
	case c.ran:
		decision = DecisionAllowed
	}
	c.span.SetAttributes(keyDecision.String(decision), keyAsked.Bool(c.asked), keyResultChars.Int(utf8.RuneCountInString(text)))
	if t.e.content {
		c.span.SetAttributes(keyResult.String(capText(text)))
	}
	if isError {
		c.span.SetStatus(codes.Error, "the call failed or was not run")
	}
	c.span.End(trace.WithTimestamp(at))
}

// TurnEnd ends the turn: why it stopped (error: what went wrong) and what its
// model calls used.
func (t *Trace) TurnEnd(at time.Time, stop, errText string, used ModelCall) {
	t.endModel(at, "the turn ended first")
	t.endCalls(at)
	if t.turn == nil {
		return
	}
	t.turn.SetAttributes(keyStop.String(stop), keyInputTokens.Int64(used.InputTokens), keyOutputTokens.Int64(used.OutputTokens))
	if used.Priced {
		t.turn.SetAttributes(keyCost.Float64(used.Cost))
	}
	if stop == "error" {
		t.turn.SetStatus(codes.Error, errText)
	}
	t.turn.End(trace.WithTimestamp(at))
	t.turn = nil
}

// endCalls ends the calls left open (a turn that ended before their result).
func (t *Trace) endCalls(at time.Time) {
	for id, c := range t.calls {
		c.span.SetAttributes(keyDecision.String(DecisionDenied), keyAsked.Bool(c.asked))
		c.span.SetStatus(codes.Error, "no result")
		c.span.End(trace.WithTimestamp(at))
		delete(t.calls, id)
	}
}

// End ends every span still open, the subagents' first: the session closes.
func (t *Trace) End(at time.Time) {
	for _, c := range t.children {
		c.End(at)
	}
	t.TurnEnd(at, "closed", "", ModelCall{})
}

func capText(s string) string {
	if len(s) <= contentCap {
		return s
	}
	r := []rune(s[:contentCap])
	return string(r[:len(r)-1]) + "…"
}
