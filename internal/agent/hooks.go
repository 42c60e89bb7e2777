package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider"
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
	o := a.hookOutcome(ctx, in)
	if amend != nil {
		amend(&o)
	}
	return o, a.logHooks(o.Runs)
}

// hookOutcome runs the hooks of in.Event without logging their runs: a
// call's hooks run before the call is logged (they may change it), and their
// records follow it.
func (a *Agent) hookOutcome(ctx context.Context, in hooks.Input) hooks.Outcome {
	if !a.c.Hooks.Has(in.Event) {
		return hooks.Outcome{}
	}
	b := a.hookBase()
	in.SessionID, in.TranscriptPath, in.Cwd = b.SessionID, b.TranscriptPath, b.Cwd
	if in.Event == hooks.SubagentStart || in.Event == hooks.SubagentStop {
		in.AgentID, in.AgentType, in.AgentTranscriptPath = b.AgentID, b.AgentType, b.AgentTranscriptPath
	}
	in.PermissionMode = string(a.Mode())
	if a.c.Effect != nil {
		a.c.Effect(ctx, nil, true) // a hook is a program of the user's
	}
	return a.c.Hooks.Run(ctx, in, a.askModel)
}

func (a *Agent) hookBase() hooks.Input {
	if a.c.HookBase == nil {
		return hooks.Input{}
	}
	return a.c.HookBase()
}

func (a *Agent) logHooks(runs []session.Hook) error {
	for i := range runs {
		if err := a.record(session.Record{Type: session.TypeHook, Hook: &runs[i]}); err != nil {
			return fmt.Errorf("log hook: %w", err)
		}
	}
	return nil
}

// askModel asks the session's model one question, without the conversation
// or tools: how prompt hooks run.
func (a *Agent) askModel(ctx context.Context, prompt string) (string, error) {
	if a.c.Provider == nil || a.c.NoModel {
		return "", errors.New("this session has no model")
	}
	model, _ := a.Model()
	resp, err := a.c.Provider.Stream(ctx, provider.Request{Model: model, MaxTokens: a.c.MaxTokens,
		Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: prompt}}}}}, nil)
	if err == nil && resp == nil {
		err = errors.New("no response")
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range resp.Message.Parts {
		if p.Type == provider.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// toolInput is a call as hooks see it: under Claude Code's name and with its
// input where the tool maps to one of Claude Code's.
func (a *Agent) toolInput(e hooks.Event, c call) hooks.Input {
	in := hooks.Input{Event: e, DshTool: c.name, ToolInput: c.args, CallID: c.id}
	if hc, ok := c.tool.(tool.HookCaller); ok {
		if name, input, ok := hc.HookCall(c.args, a.hookCwd()); ok {
			in.Tool, in.ToolInput = name, input
		}
	}
	return in
}

// hookCwd is the session's working directory, which hooks see paths against.
func (a *Agent) hookCwd() string {
	if a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return ""
	}
	return a.c.Tools.Workspace.Cwd()
}

// update applies a hook's updatedInput to c: it replaces the call's input,
// as in Claude Code; the call that runs is the one the hook asked for, and
// its card shows it. An input the tool cannot take leaves the call as it
// was, said in the hook's record.
func (a *Agent) update(c *call, o *hooks.Outcome) {
	if o.UpdatedInput == nil || len(o.Runs) == 0 {
		return
	}
	args, ok, err := []byte(nil), false, error(nil)
	if hc, mapped := c.tool.(tool.HookCaller); mapped {
		args, ok, err = hc.HookArgs(c.args, o.UpdatedInput, a.hookCwd())
	}
	if !ok && err == nil {
		args = o.UpdatedInput // the tool's own input shape (an MCP tool's)
	}
	last := &o.Runs[len(o.Runs)-1]
	if err == nil && !jsontext.Value(args).IsValid() {
		err = errors.New("not a JSON object")
	}
	if err != nil {
		last.Error = strings.TrimSpace(last.Error + "\nupdatedInput not applied: " + err.Error())
		return
	}
	c.args = jsontext.Value(args)
	last.Output = strings.TrimSpace(last.Output + "\n(the call's input was changed by this hook)")
}

// preToolUse runs the PreToolUse hooks of a call that is about to be
// permitted, and applies an updatedInput to c. A denial (or continue:
// false) is the error result the model gets, ok false; otherwise decision is
// allow, ask or "" for permit. runs are the hooks' records, which the caller
// logs after the call.
func (a *Agent) preToolUse(ctx context.Context, t *turnState, c *call) (res tool.Result, decision string, ok bool, runs []session.Hook) {
	if c.tool == nil || c.direct || !a.c.Hooks.Has(hooks.PreToolUse) {
		return tool.Result{}, "", true, nil
	}
	in := a.toolInput(hooks.PreToolUse, *c)
	o := a.hookOutcome(ctx, in)
	switch {
	case o.Decision == "deny":
		why := o.Reason
		if why == "" {
			why = "it gave no reason"
		}
		return tool.Errorf("A PreToolUse hook blocked this call: %s", why), "", false, o.Runs
	case o.Stop:
		t.hookStop = true
		return tool.Errorf("A PreToolUse hook ended the turn before this call ran. %s", o.StopReason), "", false, o.Runs
	}
	a.update(c, &o)
	return tool.Result{}, o.Decision, true, o.Runs
}

// permissionRequest runs the PermissionRequest hooks of a call the user
// would be asked about (decision is what its PreToolUse hooks decided): they
// may allow it (granted, perhaps with an updated input) or deny it for the
// user (ok false, res what the model gets).
func (a *Agent) permissionRequest(ctx context.Context, t *turnState, c *call, decision string) (res tool.Result, granted, ok bool, runs []session.Hook) {
	if c.tool == nil || c.direct || !a.c.Hooks.Has(hooks.PermissionRequest) || !a.wouldAsk(*c, decision) {
		return tool.Result{}, false, true, nil
	}
	in := a.toolInput(hooks.PermissionRequest, *c)
	o := a.hookOutcome(ctx, in)
	switch {
	case o.Stop:
		t.hookStop = true
		return tool.Errorf("A PermissionRequest hook denied this call and ended the turn. %s", o.StopReason), false, false, o.Runs
	case o.Decision == "deny":
		why := o.Reason
		if why == "" {
			why = "it gave no reason"
		}
		return tool.Errorf("A PermissionRequest hook denied this call for the user: %s", why), false, false, o.Runs
	case o.Decision == "allow":
		a.update(c, &o)
		return tool.Result{}, true, true, o.Runs
	}
	return tool.Result{}, false, true, o.Runs
}

// afterCall runs the PostToolUse hooks of a call that ran and succeeded, or
// the PostToolUseFailure hooks of one that failed or was interrupted, after
// its result is logged; what they tell the model is in their records.
func (a *Agent) afterCall(ctx context.Context, t *turnState, c call, res tool.Result, interrupted bool) error {
	ev := hooks.PostToolUse
	if res.IsError || interrupted {
		ev = hooks.PostToolUseFailure
	}
	if c.tool == nil || c.direct || !a.c.Hooks.Has(ev) {
		return nil
	}
	in := a.toolInput(ev, c)
	if ev == hooks.PostToolUseFailure {
		in.Error, in.Interrupted = res.TextOf(), interrupted
	} else {
		in.Response = a.toolResponse(c, res)
	}
	o, err := a.RunHooks(ctx, in)
	if o.Stop {
		t.hookStop = true
	}
	return err
}

// toolResponse is a result as the tool's tool_response: in Claude Code's
// tool's shape where dsh maps one, else its text and whether it failed.
func (a *Agent) toolResponse(c call, res tool.Result) jsontext.Value {
	if hc, ok := c.tool.(tool.HookCaller); ok {
		if v, ok := hc.HookResponse(c.args, res, a.hookCwd()); ok {
			return v
		}
	}
	v, _ := json.Marshal(struct {
		Output  string `json:"output"`
		IsError bool   `json:"isError"`
	}{res.TextOf(), res.IsError})
	return v
}

// stopHooks runs the Stop hooks (a subagent's: SubagentStop) when the model
// ends its turn; more says a hook blocked the stop, and its reason (in its
// record) goes to the model.
func (a *Agent) stopHooks(ctx context.Context, t *turnState) (more bool, err error) {
	// Without such hooks nothing is asked of the session, not even its
	// transcript (which hookBase brings up to date).
	if !a.c.Hooks.Has(hooks.Stop) && !a.c.Hooks.Has(hooks.SubagentStop) {
		return false, nil
	}
	ev := hooks.Stop
	if a.hookBase().AgentType != "" {
		ev = hooks.SubagentStop
	}
	if !a.c.Hooks.Has(ev) {
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
				o.Runs[i].Reason += fmt.Sprintf(" (not followed: %s hooks kept this turn going %d times already)", ev, maxStopBlocks)
			}
		}
	}
	o, err := a.runHooks(ctx, hooks.Input{Event: ev, StopHookActive: t.stopBlocks > 0}, over)
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
