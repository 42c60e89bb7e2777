package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
)

// With the real bash tool: "always allow" remembers command prefixes, both for a
// foreground command (a terminal card) and a background job (a generic card whose
// command is in the arguments), and never a blanket "bash".
func TestAlwaysAllowWithTheRealBashTool(t *testing.T) {
	e := newEnv(t)
	bg := func(id, cmd string) provider.Part {
		return use(id, "bash", `{"command":`+quote(cmd)+`,"run_in_background":true}`)
	}
	fg := func(id, cmd string) provider.Part { return use(id, "bash", `{"command":`+quote(cmd)+`}`) }
	fp := &fakeProvider{turns: []turnFunc{
		reply(fg("1", "mkdir -p one"), fg("2", "mkdir -p two"), fg("3", "touch x"), fg("4", "touch y"), fg("5", "mkdir -p three && touch z; echo three; pwd")),
		reply(bg("6", "sleep 0.1"), bg("7", "sleep 0.2"), bg("8", "touch four"), bg("9", "rm -f made-in-background")),
		reply(text("ok")),
	}}
	ask := &asker{answers: []Decision{AllowAlways, AllowAlways, AllowAlways, AllowAlways}}
	a := e.agent(fp, tool.NewRegistry(bash.Tools()...), ModeDefault, ask.permit)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	// The background calls show a generic card, so the asker records the tool name:
	// "sleep" is asked once, rm (another program) again. A line that mixes remembered
	// commands with known-safe ones (echo, pwd) still needs every key remembered.
	if want := []string{"mkdir -p one", "touch x", "mkdir -p three && touch z; echo three; pwd", "bash", "bash"}; !slices.Equal(ask.asked, want) {
		t.Errorf("asked %q, want %q", ask.asked, want)
	}
	recs := e.records(t)
	for _, id := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		if r := resultOf(t, recs, id); r.IsError {
			t.Errorf("call %s: %s", id, r.TextOf())
		}
	}
	if got := resultOf(t, recs, "5").TextOf(); !strings.Contains(got, "three") || !strings.Contains(got, e.dir) {
		t.Errorf("echo three; pwd printed %q", got)
	}
}
