package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/fs"
)

// hooked is an agent with the probe tools and hs as its hooks.
func hooked(t *testing.T, e *testEnv, p provider.Provider, pr *probe, mode Mode, permit Permitter, hs ...hooks.Hook) *Agent {
	t.Helper()
	r, err := hooks.New(hs, e.dir, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Provider: p, Registry: tool.NewRegistry(pr.tools()...), Log: e.log, Tools: e.tools, Mode: mode,
		Permit: permit, Model: "test-model", Hooks: r})
}

// A PreToolUse hook that exits 2 blocks the call; its stderr is the error
// result the model reads, and nobody is asked.
func TestPreToolUseHookBlocks(t *testing.T) {
	e := newEnv(t)
	ran := 0
	pr := &probe{run: func(_ context.Context, name, id string) tool.Result { ran++; return tool.Text("ran") }}
	fp := &fakeProvider{turns: []turnFunc{reply(use("c1", "shell", `{"command":"rm -rf build"}`)), reply(text("ok"))}}
	ask := &asker{}
	a := hooked(t, e, fp, pr, ModeDefault, ask.permit,
		hooks.Hook{Event: hooks.PreToolUse, Matcher: "shell", Command: `grep -q 'rm -rf' && { echo "rm is not allowed here" >&2; exit 2; }; exit 0`})
	if _, err := a.Prompt(t.Context(), "clean"); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t)
	want := []string{"user clean", `call c1 shell {"command":"rm -rf build"}`, "hook PreToolUse shell deny",
		"result c1 error: A PreToolUse hook blocked this call: rm is not allowed here", "assistant ok", "end end_turn"}
	if got := summary(recs); !slices.Equal(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ran != 0 || len(ask.asked) != 0 {
		t.Errorf("the call ran %d times, the user was asked %v", ran, ask.asked)
	}
	last := fp.requests()[1].Messages
	if res := last[len(last)-1].Parts[0]; !res.IsError || !strings.Contains(res.Content[0].Text, "rm is not allowed here") {
		t.Errorf("the model got %+v", res)
	}
}

// allow runs a call the mode would ask about, unasked; ask asks where the mode
// would not; neither lifts the plan mode's refusal.
func TestPreToolUseHookDecides(t *testing.T) {
	decide := func(d string) hooks.Hook {
		return hooks.Hook{Event: hooks.PreToolUse, Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d + `","permissionDecisionReason":"policy"}}'`}
	}
	for _, c := range []struct {
		mode     Mode
		decision string
		asked    bool
		ran      bool
	}{
		{ModeDefault, "allow", false, true},
		{ModeBypass, "ask", true, true},
		{ModeAcceptEdits, "ask", true, true},
		{ModePlan, "allow", false, false},
		{ModeReadOnly, "allow", false, false},
		{ModeBypass, "deny", false, false},
	} {
		e := newEnv(t)
		ran := false
		pr := &probe{run: func(context.Context, string, string) tool.Result { ran = true; return tool.Text("ran") }}
		fp := &fakeProvider{turns: []turnFunc{reply(use("c1", "change", `{"id":"x"}`)), reply(text("ok"))}}
		ask := &asker{}
		a := hooked(t, e, fp, pr, c.mode, ask.permit, decide(c.decision))
		if _, err := a.Prompt(t.Context(), "go"); err != nil {
			t.Fatal(err)
		}
		if ran != c.ran || (len(ask.asked) > 0) != c.asked {
			t.Errorf("%s, hook %s: ran %v asked %v; want ran %v asked %v", c.mode, c.decision, ran, ask.asked, c.ran, c.asked)
		}
	}
}

// A PostToolUse hook that exits 2 tells the model, after the call's result, in
// the same message; a reloaded session sends the same.
func TestPostToolUseHookTellsTheModel(t *testing.T) {
	e := newEnv(t)
	fp := &fakeProvider{turns: []turnFunc{reply(use("c1", "change", `{"id":"x"}`)), reply(text("fixed"))}}
	a := hooked(t, e, fp, &probe{}, ModeBypass, nil,
		hooks.Hook{Event: hooks.PostToolUse, Matcher: "change|tweak", Command: `cat >/dev/null; echo "lint: 2 problems" >&2; exit 2`})
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	msgs := fp.requests()[1].Messages
	last := msgs[len(msgs)-1]
	if len(last.Parts) != 2 || last.Parts[0].Type != provider.PartToolResult || last.Parts[1].Text != "PostToolUse hook on change feedback:\nlint: 2 problems" {
		t.Errorf("the model got %+v", last)
	}
	b := New(Config{Provider: fp, Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools, Model: "test-model"})
	for _, r := range e.records(t) {
		b.Fold(r)
	}
	live, _ := json.Marshal(a.messages())
	reloaded, _ := json.Marshal(b.messages())
	if string(live) != string(reloaded) {
		t.Errorf("a reloaded session's context differs:\n%s\n%s", live, reloaded)
	}
}

// A Stop hook that blocks keeps the turn going with its reason as the next
// user text, a bounded number of times; its input says when it already did.
func TestStopHookIsBounded(t *testing.T) {
	e := newEnv(t)
	var turns []turnFunc
	for range maxStopBlocks + 2 {
		turns = append(turns, reply(text("done")))
	}
	fp := &fakeProvider{turns: turns}
	a := hooked(t, e, fp, &probe{}, ModeDefault, nil,
		hooks.Hook{Event: hooks.Stop, Command: `if grep -q '"stop_hook_active":true'; then echo again >&2; else echo "run the tests" >&2; fi; exit 2`})
	stop, err := a.Prompt(t.Context(), "go")
	if err != nil || stop != StopEndTurn {
		t.Fatal(stop, err)
	}
	reqs := fp.requests()
	if len(reqs) != maxStopBlocks+1 {
		t.Fatalf("%d model calls, want %d", len(reqs), maxStopBlocks+1)
	}
	msgs := reqs[1].Messages
	if got := msgs[len(msgs)-1].Parts[0].Text; got != "Stop hook feedback:\nrun the tests" {
		t.Errorf("after the first stop the model got %q", got)
	}
	msgs = reqs[2].Messages
	if got := msgs[len(msgs)-1].Parts[0].Text; got != "Stop hook feedback:\nagain" {
		t.Errorf("after the second stop the model got %q", got)
	}
	var lastHook string
	for _, r := range e.records(t) {
		if r.Hook != nil {
			lastHook = r.Hook.Reason + "|" + r.Hook.Context
		}
	}
	if !strings.Contains(lastHook, "not followed") || strings.HasSuffix(lastHook, "again") {
		t.Errorf("the stop past the bound: %q", lastHook)
	}
}

// A Notification hook runs when the user is asked.
func TestNotificationHook(t *testing.T) {
	e := newEnv(t)
	fp := &fakeProvider{turns: []turnFunc{reply(use("c1", "change", `{"id":"x"}`)), reply(text("ok"))}}
	ask := &asker{}
	a := hooked(t, e, fp, &probe{}, ModeDefault, ask.permit,
		hooks.Hook{Event: hooks.Notification, Matcher: "permission_prompt", Command: `cat`})
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	var out string
	for _, r := range e.records(t) {
		if r.Hook != nil {
			out = r.Hook.Output
		}
	}
	if !strings.Contains(out, `"message":"dsh needs your permission to use change"`) || !strings.Contains(out, `"notification_type":"permission_prompt"`) {
		t.Errorf("the hook read %s", out)
	}
}

// A hook's allow runs a write unasked, but not one inside .git: that is asked
// about every time, whatever says otherwise.
func TestPreToolUseAllowKeepsGitQuestion(t *testing.T) {
	e := newEnv(t)
	r, err := hooks.New([]hooks.Hook{{Event: hooks.PreToolUse, Matcher: "Write",
		Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`}}, e.dir, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{turns: []turnFunc{reply(
		use("1", "write", `{"path":"a.txt","content":"a\n"}`),
		use("2", "write", `{"path":".git/hooks/pre-commit","content":"evil\n"}`),
	), reply(text("done"))}}
	ask := &asker{answers: []Decision{Reject}}
	a := New(Config{Provider: p, Registry: tool.NewRegistry(fs.Write()), Log: e.log, Tools: e.tools, Mode: ModeDefault,
		Permit: ask.permit, Hooks: r})
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ask.asked, []string{"write"}) {
		t.Errorf("asked %q, want once (the .git write)", ask.asked)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "a.txt")); err != nil {
		t.Errorf("the allowed write did not run: %v", err)
	}
}
