package agent

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
)

// DefaultCompactAt is the share of the context window past which the context is
// compacted before a model call.
const DefaultCompactAt = 0.8

//go:embed compact.md
var compactPrompt string

// ErrNothingToCompact is returned by Compact when the context holds nothing.
var ErrNothingToCompact = errors.New("there is nothing to compact yet")

// ContextUsage is how full the model's context window is.
type ContextUsage struct {
	// Tokens is the context's size: the provider's count at the last model call
	// plus an estimate of what was added since (of all of it, before the first
	// call or after a compaction).
	Tokens int64
	// Estimated is false when Tokens is exactly the provider's count.
	Estimated bool
	// Window is the model's context window (Config.ContextWindow or the table's).
	Window int64
}

// ContextUsage returns the size of the context as the next model call would
// send it.
func (a *Agent) ContextUsage() ContextUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, est := a.ctx.tokens(a.fixedLocked())
	return ContextUsage{Tokens: n, Estimated: est, Window: a.contextWindow()}
}

// Compact replaces the context with a summary the model writes of it, logged
// as a compaction record; focus, if not empty, says what the summary must keep
// in view. It returns ErrBusy while a turn runs.
func (a *Agent) Compact(ctx context.Context, focus string) error {
	if !a.turn.TryLock() {
		return ErrBusy
	}
	defer a.turn.Unlock()
	_, err := a.compact(ctx, focus, "manual")
	return err
}

// autoCompact compacts the context before a model call of turn t once it is
// past the threshold, unless nothing entered it since the last compaction.
func (a *Agent) autoCompact(ctx context.Context, t *turnState) error {
	a.mu.Lock()
	n, _ := a.ctx.tokens(a.fixedLocked())
	due := a.c.CompactAt < 1 && !a.ctx.compacted && float64(n) >= a.c.CompactAt*float64(a.contextWindow())
	a.mu.Unlock()
	if !due {
		return nil
	}
	u, err := a.compact(ctx, "", "auto")
	t.usage.InputTokens += u.InputTokens
	t.usage.OutputTokens += u.OutputTokens
	return err
}

// compact asks the model for the summary and logs it. The last turn is kept
// as it is when there are turns before it and it is small (a quarter of the
// window at most): the model then still sees the request it is working on.
//
// trigger is manual (/compact) or auto, as PreCompact hooks are told; the
// SessionStart hooks run after it, with source compact, as in Claude Code.
func (a *Agent) compact(ctx context.Context, focus, trigger string) (session.Usage, error) {
	if _, err := a.RunHooks(ctx, hooks.Input{Event: hooks.PreCompact, Trigger: trigger, CustomInstructions: focus}); err != nil {
		return session.Usage{}, err
	}
	a.mu.Lock()
	msgs := a.ctx.messages()
	last, ok := a.ctx.lastTurn()
	window := a.contextWindow()
	a.mu.Unlock()
	if len(msgs) == 0 {
		return session.Usage{}, ErrNothingToCompact
	}
	keep := 0
	if ok && last <= window/4 {
		keep = 1
	}
	ask := compactPrompt
	if focus = strings.TrimSpace(focus); focus != "" {
		ask += "\nThe user asked the summary to focus on: " + focus + "\n"
	}
	msgs = withUserText(msgs, ask)
	// The tools are offered, though not to be called, because the APIs refuse
	// tool calls in a conversation that defines no tools.
	model, thinking := a.Model()
	resp, err := a.c.Provider.Stream(ctx, provider.Request{Model: model, Thinking: thinking, System: a.systemPrompt(),
		Messages: msgs, Tools: a.defs(), MaxTokens: a.c.MaxTokens}, nil)
	if err == nil && resp == nil {
		err = errors.New("no response")
	}
	if err != nil {
		return session.Usage{}, fmt.Errorf("compact: model %s: %w", a.c.Provider.Name(), err)
	}
	// The call's model is logged with it: the header does not hold the model a
	// session started with, and a reload may be configured with another.
	u := session.Usage{InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		Calls: []session.CallUsage{{Model: model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}}}
	var b strings.Builder
	for _, p := range resp.Message.Parts {
		if p.Type == provider.PartText {
			b.WriteString(p.Text)
		}
	}
	summary := strings.TrimSpace(b.String())
	if summary == "" {
		return u, errors.New("compact: the model wrote no summary")
	}
	rec := session.Record{Type: session.TypeCompaction, Text: summary, Keep: keep, Focus: focus, Usage: &u}
	if err := a.record(rec); err != nil {
		return u, fmt.Errorf("log compaction: %w", err)
	}
	if _, err := a.RunHooks(ctx, hooks.Input{Event: hooks.SessionStart, Source: "compact"}); err != nil {
		return u, err
	}
	if a.c.OnUsage != nil {
		cu := a.ContextUsage()
		a.c.OnUsage(session.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ContextTokens: cu.Tokens})
	}
	return u, nil
}

// withUserText returns msgs with text added as the last user message (joined to
// the last message if that is the user's), sharing nothing it changes.
func withUserText(msgs []provider.Message, text string) []provider.Message {
	p := provider.Part{Type: provider.PartText, Text: text}
	out := append([]provider.Message(nil), msgs...)
	if n := len(out); n > 0 && out[n-1].Role == provider.RoleUser {
		out[n-1].Parts = append(out[n-1].Parts[:len(out[n-1].Parts):len(out[n-1].Parts)], p)
		return out
	}
	return append(out, provider.Message{Role: provider.RoleUser, Parts: []provider.Part{p}})
}

// summaryText is the user message a compaction leaves in place of the turns it
// replaced.
func summaryText(r session.Record) string {
	return "This conversation was compacted because it grew too long for the context window. " +
		"Here is the summary of it so far, written before the compaction; the turns it replaced are gone, " +
		"so read files again before relying on their contents.\n\n" + r.Text
}

// fixedTokens is the estimate of what every request carries besides messages.
func fixedTokens(system string, defs []provider.ToolDef) int64 {
	return models.Estimate(provider.Request{System: system, Tools: defs})
}

// fixedLocked is fixedTokens of the system prompt in force, estimated on first
// need (a session that only runs calls never needs it) and again after a header
// changes the prompt; without a model, nothing. The caller holds a.mu.
func (a *Agent) fixedLocked() int64 {
	if a.c.NoModel {
		return 0
	}
	if _, gen := a.c.Registry.Snapshot(); gen != a.fixedGen { // the tools changed
		a.fixed, a.fixedGen = -1, gen
	}
	if a.fixed < 0 {
		a.fixed = fixedTokens(a.system, a.defs())
	}
	return a.fixed
}

// contextWindow is the window of the model in force: the configured one, else
// the model table's for the model last set (a model change moves it). The
// caller holds a.mu.
func (a *Agent) contextWindow() int64 {
	model := a.model
	if model == "" {
		model = a.c.Model
	}
	if a.c.Window != nil {
		return a.c.Window(model)
	}
	if a.c.ContextWindow > 0 {
		return a.c.ContextWindow
	}
	return models.Lookup(model).ContextWindow
}
