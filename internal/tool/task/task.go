// Package task is the task tool: the model hands a sub-task to a subagent, a
// child session with its own context and log that the host starts
// (tool.Session.Subagents), and reads back its final answer. The subagent is
// the built-in read-only explorer or one of the session's custom agents
// (package agents); which tools it gets is decided here, for the host and for
// the agent loop's "may this call run beside others" alike.
package task

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed task.md
	description string
	//go:embed guidance.md
	guidance string
	// ExplorePrompt is the built-in explore agent's system prompt.
	//go:embed explore.md
	ExplorePrompt string
)

// Name is the tool's name; Explore the built-in agent's, which only reads.
const (
	Name    = "task"
	Explore = "explore"
)

type params struct {
	Description string `json:"description" jsonschema:"minLength=1" jsonschema_description:"A short (3-5 word) description of the task."`
	Prompt      string `json:"prompt" jsonschema:"minLength=1" jsonschema_description:"The task for the subagent, complete: it does not see this conversation."`
	Agent       string `json:"subagent_type,omitempty" jsonschema_description:"The agent to run, one of those listed in the tool's description; omit it for explore."`
}

// Meta is what a task's result persists: the child session (whose log holds
// the subagent's calls), its agent, its calls, how it ended and its model
// calls' tokens, which the parent session's usage counts.
type Meta struct {
	Session string           `json:"session"`
	Agent   string           `json:"agent"`
	Calls   int              `json:"calls,omitzero"`
	Stop    string           `json:"stop,omitempty"`
	Usage   []tool.TaskUsage `json:"usage,omitempty"`
}

// Validate implements tool.Validator.
func (m *Meta) Validate() error {
	if m.Session == "" || m.Agent == "" {
		return fmt.Errorf("task meta without a session or an agent")
	}
	return nil
}

// Tokens is what the subagent's model calls used, input and output.
func (m *Meta) Tokens() int64 {
	var n int64
	for _, u := range m.Usage {
		n += u.InputTokens + u.OutputTokens
	}
	return n
}

// Tool returns the task tool offering the custom agents as; readOnly says
// whether a set of the session's tools only reads (the agent loop runs such
// calls beside each other).
func Tool(as []agents.Agent, readOnly func(names []string) bool) tool.Tool {
	desc := description
	if listed, _ := agents.Listed(as); len(listed) > 0 {
		var b strings.Builder
		b.WriteString(description)
		b.WriteString("\n\nAgents (subagent_type), besides explore:\n")
		for _, a := range listed {
			// The repository's are its author's words, not the user's: said so.
			repo := ""
			if a.Repo {
				repo = " (the repository's agent file, not the user's)"
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", a.Name, repo, a.Description)
		}
		desc = strings.TrimRight(b.String(), "\n")
	}
	return tool.New(tool.Spec[params, Meta]{
		Name:        Name,
		Description: desc,
		Guidance:    guidance,
		ReadOnly:    true,
		ReadOnlyCall: func(p params) bool {
			if p.Agent == "" || p.Agent == Explore && !has(as, Explore) {
				return true
			}
			a, ok := agents.Find(as, p.Agent)
			return ok && a.Tools != nil && readOnly(a.Tools)
		},
		Permission:    tool.PermNone, // the subagent's own calls are asked about
		Kind:          card.ToolThink,
		Execute:       execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

func has(as []agents.Agent, name string) bool {
	_, ok := agents.Find(as, name)
	return ok
}

// excluded are the tools a subagent never gets: it cannot start subagents of
// its own, ask the user, hand over a plan or keep the session's todo list.
var excluded = []string{Name, "ask_user", "plan", "todo_write"}

// ChildTools are the tools of a subagent running a (nil: explore): the
// session's tools that only read for explore, else those the agent names
// (all, if it names none), never one the session does not offer.
func ChildTools(parent *tool.Registry, a *agents.Agent) []tool.Tool {
	var out []tool.Tool
	for _, t := range parent.Tools() {
		n := t.Name()
		switch {
		case slices.Contains(excluded, n):
		case a == nil:
			if t.ReadOnly() {
				out = append(out, t)
			}
		case a.Tools == nil || slices.Contains(a.Tools, n):
			out = append(out, t)
		}
	}
	return out
}

func execute(ctx context.Context, env tool.Env, p params, _ *Meta) (tool.Result, *Meta, error) {
	if env.Session == nil || env.Session.Subagents == nil {
		return tool.Errorf("No subagent can be started in this session: do the task yourself."), nil, nil
	}
	out, err := env.Session.Subagents.Run(ctx, tool.Task{CallID: env.CallID, Agent: p.Agent, Description: p.Description, Prompt: p.Prompt})
	if err != nil {
		return tool.Errorf("The subagent did not start: %v", err), nil, nil
	}
	m := &Meta{Session: out.Session, Agent: out.Agent, Calls: out.Calls, Stop: out.Stop, Usage: out.Usage}
	text := out.Text
	res := tool.Text(text)
	switch out.Stop {
	case "end_turn":
		if strings.TrimSpace(text) == "" {
			res = tool.Text("(The subagent ended without an answer.)")
		}
	case "cancelled":
		res = tool.Errorf("%s", strings.TrimSpace(text+"\n\nThe subagent was cancelled."))
	default:
		res = tool.Errorf("%s", strings.TrimSpace(text+"\n\nThe subagent stopped early: "+out.Stop+"."))
	}
	return res, m, nil
}
