package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// unschematic's parameters have no JSON schema (a channel): a tool of them
// panics when its schema is built.
type unschematic struct {
	C chan int `json:"c"`
}

// A session that calls no model (dsh tool) builds no tool's schema but the one
// of the call it runs: not to open, not for its context's size, which leaves
// out the system prompt and tools only a model request carries. With a model,
// the size counts them.
func TestNoModelBuildsNoToolList(t *testing.T) {
	e := newEnv(t)
	bad := tool.New(tool.Spec[unschematic, tool.NoMeta]{Name: "bad", Kind: card.ToolOther,
		Execute: func(context.Context, tool.Env, unschematic, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("ran"), nil, nil
		}})
	reg := tool.NewRegistry(append((&probe{}).tools(), bad)...)
	system := strings.Repeat("system prompt ", 400)
	a := New(Config{Registry: reg, Log: e.log, Tools: e.tools, Mode: ModeBypass, Model: "m", System: system, NoModel: true})
	res, err := a.RunTool(t.Context(), "look", []byte(`{"id":"x"}`))
	if err != nil || res.TextOf() != "look x done" {
		t.Fatalf("RunTool = %q, %v", res.TextOf(), err)
	}
	without := a.ContextUsage()

	withModel := New(Config{Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools, Mode: ModeBypass, Model: "m", System: system})
	for _, r := range e.records(t) {
		withModel.Fold(r)
	}
	with := withModel.ContextUsage()
	if with.Tokens < without.Tokens+400 {
		t.Errorf("context with a model %d tokens, without %d: want the system prompt's 400 and more counted only with one", with.Tokens, without.Tokens)
	}
}
