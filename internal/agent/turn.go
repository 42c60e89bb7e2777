package agent

import (
	"context"
	"slices"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Turn is what one prompt changes for its own turn only: a custom command's
// or a skill's front matter. Nothing of it outlives the turn, so a reloaded
// session, whose turns are over, needs no record of it.
type Turn struct {
	// Allow pre-approves calls (allowed-tools): one it accepts runs where the
	// mode would ask. It never lifts a refusal (read-only, plan), a question
	// about a risky path (.git, steering files, outside), a hook's "ask", and
	// the sandbox still confines what runs.
	Allow func(tool string, args []byte) bool
	// Model, if set, is the model the turn's requests go to.
	Model string
	// Hide are tools the turn does not offer (disallowed-tools); a call of
	// one is refused.
	Hide []string
}

// RunAsked runs one call the user's input asked for (a command body's
// !`cmd`) as the model's calls run: its hooks, the mode, the permission
// question (always asked when ask is set: an untrusted repository's
// command), the sandbox; turn's Allow may pre-approve it. It is logged like
// the user's own calls (RunTool).
func (a *Agent) RunAsked(ctx context.Context, turn Turn, name string, args []byte, ask bool) (tool.Result, error) {
	return a.runOne(ctx, turn, call{name: name, args: objectArgs(args), aside: true, ask: ask})
}

// setTurn puts turn in force and returns what ends it; the caller holds the
// turn lock, so no other turn's is overwritten.
func (a *Agent) setTurn(turn Turn) func() {
	a.mu.Lock()
	a.turnOpts = turn
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		a.turnOpts = Turn{}
		a.mu.Unlock()
	}
}

func (a *Agent) currentTurn() Turn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turnOpts
}

// turnModel is the model the turn's requests go to.
func (a *Agent) turnModel() (model, thinking string) {
	model, thinking = a.Model()
	if m := a.currentTurn().Model; m != "" {
		model = m
	}
	return model, thinking
}

// turnTools are the tools the turn offers the model.
func (a *Agent) turnTools() []provider.ToolDef {
	hide := a.currentTurn().Hide
	if len(hide) == 0 {
		return a.defs()
	}
	return slices.DeleteFunc(slices.Clone(a.defs()), func(d provider.ToolDef) bool { return slices.Contains(hide, d.Name) })
}

// hidden is the result of a call of a tool the turn does not offer.
func (a *Agent) hidden(c call) (tool.Result, bool) {
	if !slices.Contains(a.currentTurn().Hide, c.name) {
		return tool.Result{}, false
	}
	return tool.Errorf("%s is not available in this turn: the command the user ran disallows it.", c.name), true
}

// preApproved says the turn's allowed-tools let c run unasked.
func (a *Agent) preApproved(c call) bool {
	allow := a.currentTurn().Allow
	return allow != nil && allow(c.name, c.args)
}
