package task_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/task"
	"github.com/dsh-dev/dsh/internal/toolset"
)

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name())
	}
	return out
}

// A subagent's tools are the session's, narrowed: explore's only read, an
// agent's are those it names (all without a list, todo_write and ask_user
// included) but those it disallows, and none is ever the task tool itself or
// plan. A task call runs beside others only when its agent's tools all read.
func TestChildTools(t *testing.T) {
	writer := agents.Agent{Name: "writer", Description: "w", Tools: []string{"read", "write", "nonesuch"}}
	reader := agents.Agent{Name: "reader", Description: "r", Tools: []string{"read", "grep"}}
	all := agents.Agent{Name: "all", Description: "a"}
	noShell := agents.Agent{Name: "no-shell", Description: "n", Disallowed: []string{"bash", "job_output"}}
	listed := agents.Agent{Name: "listed", Description: "l", Tools: []string{"read", "todo_write", "ask_user", "task"}, Disallowed: []string{"read"}}
	reg := toolset.New(toolset.Options{Agents: []agents.Agent{writer, reader, all}})
	for _, tc := range []struct {
		agent       agents.Agent
		has, hasNot []string
	}{
		{all, []string{"bash", "edit", "todo_write", "ask_user", "web_fetch"}, []string{"task", "plan"}},
		{noShell, []string{"edit", "todo_write", "ask_user", "job_kill"}, []string{"bash", "job_output", "task", "plan"}},
		{listed, []string{"todo_write", "ask_user"}, []string{"read", "task", "bash"}},
	} {
		got := names(task.ChildTools(reg, &tc.agent))
		for _, n := range tc.has {
			if !slices.Contains(got, n) {
				t.Errorf("%s lacks %s: %q", tc.agent.Name, n, got)
			}
		}
		for _, n := range tc.hasNot {
			if slices.Contains(got, n) {
				t.Errorf("%s gets %s: %q", tc.agent.Name, n, got)
			}
		}
	}

	explore := names(task.ChildTools(reg, nil))
	for _, n := range explore {
		if tl, _ := reg.Get(n); !tl.ReadOnly() {
			t.Errorf("explore gets %s, which does not only read", n)
		}
	}
	if !slices.Contains(explore, "read") || !slices.Contains(explore, "grep") {
		t.Errorf("explore's tools %q", explore)
	}
	if got := names(task.ChildTools(reg, &writer)); !slices.Equal(got, []string{"read", "write"}) {
		t.Errorf("writer's tools %q, want read and write (no tool the session lacks)", got)
	}
	for _, n := range []string{"task", "plan"} {
		if slices.Contains(explore, n) {
			t.Errorf("explore gets %s", n)
		}
	}

	tt, _ := reg.Get("task")
	ro, ok := tt.(interface{ ReadOnlyCall([]byte) bool })
	if !ok {
		t.Fatal("the task tool does not say which calls only read")
	}
	for args, want := range map[string]bool{
		`{"description":"d","prompt":"p"}`:                           true,
		`{"description":"d","prompt":"p","subagent_type":"explore"}`: true,
		`{"description":"d","prompt":"p","subagent_type":"reader"}`:  true,
		`{"description":"d","prompt":"p","subagent_type":"writer"}`:  false,
		`{"description":"d","prompt":"p","subagent_type":"all"}`:     false,
		`{"description":"d","prompt":"p","subagent_type":"nobody"}`:  false,
	} {
		if got := ro.ReadOnlyCall([]byte(args)); got != want {
			t.Errorf("%s runs beside others: %v, want %v", args, got, want)
		}
	}
	d := tt.Description()
	for _, want := range []string{"- writer: w", "- reader: r", "- all: a"} {
		if !strings.Contains(d, want) {
			t.Errorf("the description does not list %q:\n%s", want, d)
		}
	}
}

// The task tool's list of agents marks the repository's as its files, not
// the user's: the model reads their descriptions as the repository's words.
func TestRepositoryAgentsAreMarked(t *testing.T) {
	desc := task.Tool([]agents.Agent{{Name: "mine", Description: "Mine."}, {Name: "theirs", Description: "Theirs.", Repo: true}},
		func([]string) bool { return true }).Description()
	for _, want := range []string{"- mine: Mine.\n", "- theirs (the repository's agent file, not the user's): Theirs."} {
		if !strings.Contains(desc, want) {
			t.Errorf("the description does not hold %q:\n%s", want, desc)
		}
	}
}
