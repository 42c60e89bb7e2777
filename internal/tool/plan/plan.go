// Package plan is the plan tool: the agent presents a plan (Markdown, the
// files it will touch, its steps) and the user answers "Implement this plan?"
// with the mode to continue in, or keeps planning. An approval switches the
// session's mode (a logged mode record) and makes the steps the todo list.
package plan

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/todo"
)

var (
	//go:embed plan.md
	description string
	//go:embed guidance.md
	guidance string
)

type params struct {
	Plan  string   `json:"plan" jsonschema:"minLength=1" jsonschema_description:"The plan in Markdown."`
	Files []string `json:"files" jsonschema_description:"The files you intend to create or change, relative to the workspace root."`
	Steps []string `json:"steps,omitempty" jsonschema_description:"The steps in order, each a short imperative sentence; they become the todo list when the plan is approved."`
}

// meta is what the user was offered and answered, and the mode the session
// went on in ("" when it kept planning).
type meta struct {
	Choices []card.Choice `json:"choices"`
	Answer  card.Answer   `json:"answer"`
	Mode    string        `json:"mode,omitempty"`
}

// Validate implements tool.Validator: the answer is one of the choices, and a
// mode is one of the modes a plan may be approved in.
func (m *meta) Validate() error {
	if err := card.ValidateResult(&card.PlanResult{Choices: m.Choices, Answer: m.Answer}); err != nil {
		return err
	}
	if m.Mode != "" && (m.Mode != m.Answer.ID || !approves(m.Mode)) {
		return fmt.Errorf("mode %q does not follow the answer %q", m.Mode, m.Answer.ID)
	}
	return nil
}

// The choices' ids: the modes a plan may be approved in, and keepPlanning.
const (
	modeDefault  = "default"
	modeEdits    = "accept-edits"
	modeAuto     = "auto"
	modePlan     = "plan"
	keepPlanning = "keep"
)

func approves(id string) bool { return id == modeDefault || id == modeEdits || id == modeAuto }

// Question is what the user is asked.
const Question = "Implement this plan?"

// Tool returns the plan tool.
func Tool() tool.Tool {
	return tool.New(tool.Spec[params, meta]{
		Name:          "plan",
		Description:   description,
		Guidance:      guidance,
		Permission:    tool.PermNone, // the question is the permission
		Kind:          card.ToolThink,
		Execute:       execute,
		Fold:          fold,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

// choices are the answers offered: auto only where the session may switch to it.
func choices(auto bool) []card.Choice {
	cs := []card.Choice{
		{ID: modeDefault, Label: "Yes, and ask before each change", Description: "continue in the default mode"},
		{ID: modeEdits, Label: "Yes, and accept file edits", Description: "continue in the accept-edits mode: commands are still asked about"},
	}
	if auto {
		cs = append(cs, card.Choice{ID: modeAuto, Label: "Yes, in auto mode", Description: "edits and commands run without asking; commands run in the sandbox"})
	}
	return append(cs, card.Choice{ID: keepPlanning, Label: "No, keep planning", Description: "say what to change"})
}

func execute(ctx context.Context, env tool.Env, p params, _ *meta) (tool.Result, *meta, error) {
	if strings.TrimSpace(p.Plan) == "" {
		return tool.Errorf("The plan is empty: write it in Markdown in `plan`."), nil, nil
	}
	// Approving a plan switches the mode: outside plan mode that would be a
	// way out of read-only, or a second question about what the mode allows.
	if env.Mode != modePlan {
		return tool.Errorf("The plan tool works only in plan mode, and this session is in %s mode: nothing was asked and "+
			"the mode did not change. Present the plan in a message instead.", orDefault(env.Mode)), nil, nil
	}
	if env.Ask == nil || env.SetMode == nil {
		return tool.Errorf("No one can approve the plan in this session (there is no user to ask), so it was not approved " +
			"and the mode did not change. End your turn with the plan written out in a message."), nil, nil
	}
	m := &meta{Choices: choices(env.AutoMode)}
	a, err := env.Ask(ctx, tool.Question{Text: Question, Choices: m.Choices, FreeText: true})
	if ctx.Err() != nil {
		return tool.Errorf("Cancelled by the user before they answered."), nil, nil
	}
	if err != nil {
		return tool.Errorf("Could not ask the user to approve the plan (%v); it was not approved.", err), nil, nil
	}
	if a.ID != "" && !offered(m.Choices, a.ID) {
		return tool.Result{}, nil, errors.New("the answer " + a.ID + " was not one of the choices")
	}
	m.Answer = a
	if !approves(a.ID) {
		return tool.Text(keepText(a)), m, nil
	}
	if err := env.SetMode(a.ID); err != nil {
		return tool.Errorf("The user approved the plan in %s mode, but the mode could not be set: %v. The session stays in its mode.", a.ID, err), nil, nil
	}
	m.Mode = a.ID
	text := fmt.Sprintf("The user approved the plan. The session is now in %s mode: implement the plan now.", a.ID)
	if entries := todos(p.Steps); len(entries) > 0 {
		env.PublishPlan(entries)
		text += " Its steps are your todo list: keep it up to date with todo_write as you work."
	}
	return tool.Text(text), m, nil
}

// orDefault names the mode of a session that has none set: the default.
func orDefault(mode string) string {
	if mode == "" {
		return modeDefault
	}
	return mode
}

func offered(cs []card.Choice, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

// keepText tells the model the plan was not approved, with what the user said.
func keepText(a card.Answer) string {
	switch {
	case a.None():
		return "The user did not answer, so the plan was not approved and the mode did not change. " +
			"End your turn: the user may say more in their next message."
	case a.ID == "":
		return "The user did not approve the plan; they want you to keep planning and said:\n\n" + a.Text +
			"\n\nRevise the plan accordingly and present it again with the plan tool."
	}
	return "The user did not approve the plan and wants you to keep planning. The mode did not change. " +
		"Ask what to change if it is not clear, or revise the plan and present it again."
}

// todos are a plan's steps as a fresh todo list.
func todos(steps []string) []tool.PlanEntry {
	var out []tool.PlanEntry
	for _, s := range steps {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, tool.PlanEntry{Content: s, Status: "pending"})
		}
	}
	return out
}

// fold makes an approved plan's steps the session's todo list, live and on
// reload, as todo_write's list is.
func fold(s *tool.Session, p params, r tool.Result, m *meta) {
	if r.IsError || m == nil || m.Mode == "" {
		return
	}
	if entries := todos(p.Steps); len(entries) > 0 {
		todo.Set(s, entries)
	}
}
