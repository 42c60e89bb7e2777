package agent

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// maxStopBlocks bounds how often Stop hooks may keep one prompt's turn going,
// so that a hook that always blocks cannot loop until MaxTurns.
const maxStopBlocks = 3

// RunHooks runs the hooks of in.Event with the session's common fields and
// logs each run; it is how the host runs the hooks of prompts and sessions.
// An error is a failure to write the log.
func (a *Agent) RunHooks(ctx context.Context, in hooks.Input) (hooks.Outcome, error) {
	return a.runHooks(ctx, in, nil)
}

// runHooks is RunHooks; amend, if set, may change the outcome before it is logged.
func (a *Agent) runHooks(ctx context.Context, in hooks.Input, amend func(*hooks.Outcome)) (hooks.Outcome, error) {
	if !a.c.Hooks.Has(in.Event) {
		return hooks.Outcome{}, nil
	}
	if a.c.HookBase != nil {
		b := a.c.HookBase()
		in.SessionID, in.TranscriptPath, in.Cwd = b.SessionID, b.TranscriptPath, b.Cwd
	}
	in.PermissionMode = string(a.Mode())
	o := a.c.Hooks.Run(ctx, in)
	if amend != nil {
		amend(&o)
	}
	for i := range o.Runs {
		if err := a.record(session.Record{Type: session.TypeHook, Hook: &o.Runs[i]}); err != nil {
			return o, fmt.Errorf("log hook: %w", err)
		}
	}
	return o, nil
}

// toolInput is a call as hooks see it: under Claude Code's name and with its
// input where the tool maps to one of Claude Code's.
func (a *Agent) toolInput(e hooks.Event, c call) hooks.Input {
	in := hooks.Input{Event: e, DshTool: c.name, ToolInput: c.args, CallID: c.id}
	if hc, ok := c.tool.(tool.HookCaller); ok && a.c.Tools != nil && a.c.Tools.Workspace != nil {
		if name, input, ok := hc.HookCall(c.args, a.c.Tools.Workspace.Cwd()); ok {
			in.Tool, in.ToolInput = name, input
		}
	}
	return in
}

// preToolUse runs the PreToolUse hooks of a call that is about to be
// permitted. A denial (or continue: false) is the error result the model
// gets, ok false; otherwise decision is allow, ask or "" for permit.
func (a *Agent) preToolUse(ctx context.Context, t *turnState, c call) (res tool.Result, decision string, ok bool, err error) {
	if c.tool == nil || c.direct || !a.c.Hooks.Has(hooks.PreToolUse) {
		return tool.Result{}, "", true, nil
	}
	o, err := a.RunHooks(ctx, a.toolInput(hooks.PreToolUse, c))
	if err != nil {
		return tool.Result{}, "", false, err
	}
	switch {
	case o.Decision == "deny":
		why := o.Reason
		if why == "" {
			why = "it gave no reason"
		}
		return tool.Errorf("A PreToolUse hook blocked this call: %s", why), "", false, nil
	case o.Stop:
		t.hookStop = true
		return tool.Errorf("A PreToolUse hook ended the turn before this call ran. %s", o.StopReason), "", false, nil
	}
	return tool.Result{}, o.Decision, true, nil
}

// postToolUse runs the PostToolUse hooks of a call that ran, after its result
// is logged; what they tell the model is in their records.
func (a *Agent) postToolUse(ctx context.Context, t *turnState, c call, res tool.Result) error {
	if c.tool == nil || c.direct || !a.c.Hooks.Has(hooks.PostToolUse) {
		return nil
	}
	in := a.toolInput(hooks.PostToolUse, c)
	in.Response, _ = json.Marshal(struct {
		Output  string `json:"output"`
		IsError bool   `json:"isError"`
	}{res.TextOf(), res.IsError})
	o, err := a.RunHooks(ctx, in)
	if o.Stop {
		t.hookStop = true
	}
	return err
}

// stopHooks runs the Stop hooks when the model ends its turn; more says a
// hook blocked the stop, and its reason (in its record) goes to the model.
func (a *Agent) stopHooks(ctx context.Context, t *turnState) (more bool, err error) {
	if !a.c.Hooks.Has(hooks.Stop) {
		return false, nil
	}
	over := func(o *hooks.Outcome) {
		if t.stopBlocks < maxStopBlocks {
			return
		}
		// The turn ends anyway: the model is not told to go on.
		for i := range o.Runs {
			if o.Runs[i].Decision == "block" {
				o.Runs[i].Context = ""
				o.Runs[i].Reason += fmt.Sprintf(" (not followed: Stop hooks kept this turn going %d times already)", maxStopBlocks)
			}
		}
	}
	o, err := a.runHooks(ctx, hooks.Input{Event: hooks.Stop, StopHookActive: t.stopBlocks > 0}, over)
	if err != nil || o.Stop || o.Decision != "block" || t.stopBlocks >= maxStopBlocks {
		return false, err
	}
	t.stopBlocks++
	return true, nil
}

// notify runs the Notification hooks: the user is about to be asked.
func (a *Agent) notify(ctx context.Context, message, kind string) error {
	_, err := a.RunHooks(ctx, hooks.Input{Event: hooks.Notification, Message: message, NotificationType: kind})
	return err
}
