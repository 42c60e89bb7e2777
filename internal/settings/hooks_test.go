package settings

import (
	"slices"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/hooks"
)

// The configuration takes exactly the events the hooks package runs, and a
// hook reaches the runner with everything its file said.
func TestHookEventsAndFields(t *testing.T) {
	var runs []string
	for _, e := range hooks.Events {
		runs = append(runs, string(e))
	}
	if !slices.Equal(runs, config.HookEvents) {
		t.Errorf("config takes %v, hooks run %v", config.HookEvents, runs)
	}
	in := config.Hook{Event: "PostToolUse", Matcher: "Bash", Type: "http", URL: "http://127.0.0.1:1/x",
		Headers: map[string]string{"A": "$B"}, AllowedEnvVars: []string{"B"}, Timeout: time.Second, Source: "s",
		Env: []string{"CLAUDE_PLUGIN_ROOT=/p"}}
	got := hookList([]config.Hook{in})[0]
	if got.Event != hooks.PostToolUse || got.Type != "http" || got.URL != in.URL || got.Headers["A"] != "$B" ||
		!slices.Equal(got.AllowedEnvVars, in.AllowedEnvVars) || got.Timeout != time.Second || got.Matcher != "Bash" || got.Source != "s" ||
		!slices.Equal(got.Env, in.Env) {
		t.Errorf("got %+v", got)
	}
	p := hookList([]config.Hook{{Event: "Stop", Type: "prompt", Prompt: "done? $ARGUMENTS"}})[0]
	if p.Type != "prompt" || p.Prompt != "done? $ARGUMENTS" {
		t.Errorf("got %+v", p)
	}
}
