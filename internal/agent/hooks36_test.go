package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/fs"
)

// writer is an agent with the write and edit tools and hs as its hooks.
func writer(t *testing.T, e *testEnv, p *fakeProvider, mode Mode, permit Permitter, hs ...hooks.Hook) *Agent {
	t.Helper()
	r, err := hooks.New(hs, e.dir, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Provider: p, Registry: tool.NewRegistry(fs.Write(), fs.Edit()), Log: e.log, Tools: e.tools, Mode: mode,
		Permit: permit, Model: "test-model", Hooks: r})
}

// An updatedInput from PreToolUse or PermissionRequest is the call that
// runs, and the call logged (which every card is made from) is that call.
func TestUpdatedInputIsTheCallThatRuns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hook  hooks.Hook
		asked bool
	}{
		{"PreToolUse", hooks.Hook{Event: hooks.PreToolUse, Matcher: "Write", Command: `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse",` +
			`"permissionDecision":"allow","updatedInput":{"content":"safe\n"}}}'`}, false},
		{"PreToolUse without a decision", hooks.Hook{Event: hooks.PreToolUse, Matcher: "Write", Command: `jq -c '{hookSpecificOutput:{hookEventName:"PreToolUse",` +
			`updatedInput:(.tool_input + {content:"safe\n"})}}'`}, true},
		{"PermissionRequest", hooks.Hook{Event: hooks.PermissionRequest, Matcher: "Write", Command: `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest",` +
			`"decision":{"behavior":"allow","updatedInput":{"content":"safe\n"}}}}'`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.hook.Command, "jq") {
				if _, err := exec.LookPath("jq"); err != nil {
					t.Skip("no jq")
				}
			}
			e := newEnv(t)
			p := &fakeProvider{turns: []turnFunc{reply(use("1", "write", `{"path":"a.txt","content":"rm -rf /\n"}`)), reply(text("done"))}}
			ask := &asker{answers: []Decision{AllowOnce}}
			a := writer(t, e, p, ModeDefault, ask.permit, tc.hook)
			if _, err := a.Prompt(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(e.dir, "a.txt")); err != nil || string(b) != "safe\n" {
				t.Errorf("the file holds %q (%v), want the hook's content", b, err)
			}
			if got := len(ask.asked) > 0; got != tc.asked {
				t.Errorf("asked %v, want %v", ask.asked, tc.asked)
			}
			recs := e.records(t)
			var call session.Record
			for _, r := range recs {
				if r.Type == session.TypeToolCall {
					call = r
				}
			}
			if string(call.Args) != `{"path":"a.txt","content":"safe\n"}` {
				t.Errorf("the logged call is %s", call.Args)
			}
			if got := summary(recs); !slices.Contains(got, "hook "+string(tc.hook.Event)+" Write allow") && tc.hook.Event == hooks.PermissionRequest {
				t.Errorf("records:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// A PermissionRequest hook answers for the user: deny is the model's error
// and nobody is asked; it runs only where the user would be asked.
func TestPermissionRequestHook(t *testing.T) {
	deny := hooks.Hook{Event: hooks.PermissionRequest, Command: `echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest",` +
		`"decision":{"behavior":"deny","message":"not on Fridays"}}}'`}
	for _, tc := range []struct {
		mode Mode
		ran  bool
		hook bool // the hook ran
	}{
		{ModeDefault, false, true},
		{ModeBypass, true, false}, // nobody would be asked: no PermissionRequest
	} {
		e := newEnv(t)
		p := &fakeProvider{turns: []turnFunc{reply(use("1", "write", `{"path":"a.txt","content":"x\n"}`)), reply(text("done"))}}
		ask := &asker{answers: []Decision{AllowOnce}}
		a := writer(t, e, p, tc.mode, ask.permit, deny)
		if _, err := a.Prompt(t.Context(), "go"); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(filepath.Join(e.dir, "a.txt"))
		hooked := slices.ContainsFunc(e.records(t), func(r session.Record) bool { return r.Hook != nil })
		if (err == nil) != tc.ran || hooked != tc.hook || len(ask.asked) != 0 {
			t.Errorf("%s: ran %v (want %v), hook ran %v (want %v), asked %v", tc.mode, err == nil, tc.ran, hooked, tc.hook, ask.asked)
		}
		if tc.hook {
			last := p.requests()[1].Messages
			if res := last[len(last)-1].Parts[0]; !strings.Contains(res.Content[0].Text, "not on Fridays") {
				t.Errorf("the model got %+v", res)
			}
		}
	}
}

// PostToolUse hooks get the tool's tool_response in Claude Code's shape; a
// call that fails runs PostToolUseFailure instead, with its error.
func TestPostToolUseShapesAndFailure(t *testing.T) {
	both := []hooks.Hook{{Event: hooks.PostToolUse, Command: `cat`}, {Event: hooks.PostToolUseFailure, Command: `cat`}}
	read := func(e *testEnv) []string {
		var got []string
		for _, r := range e.records(t) {
			if r.Hook != nil {
				got = append(got, r.Hook.Event+" "+r.Hook.Output)
			}
		}
		return got
	}
	e := newEnv(t)
	p := &fakeProvider{turns: []turnFunc{reply(use("1", "write", `{"path":"a.txt","content":"one\n"}`)), reply(text("done"))}}
	if _, err := writer(t, e, p, ModeBypass, nil, both...).Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(e.dir, "a.txt")
	if got := read(e); len(got) != 1 || !strings.Contains(got[0], `PostToolUse {`) || !strings.Contains(got[0], `"tool_name":"Write"`) ||
		!strings.Contains(got[0], `"tool_response":{"type":"create","filePath":"`+abs+`","content":"one\n","success":true}`) {
		t.Errorf("hooks read:\n%s", strings.Join(got, "\n"))
	}

	e = newEnv(t)
	pr := &probe{run: func(context.Context, string, string) tool.Result { return tool.Errorf("it broke") }}
	fp := &fakeProvider{turns: []turnFunc{reply(use("c1", "change", `{"id":"x"}`)), reply(text("ok"))}}
	if _, err := hooked(t, e, fp, pr, ModeBypass, nil, both...).Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if got := read(e); len(got) != 1 || !strings.Contains(got[0], `PostToolUseFailure {`) ||
		!strings.Contains(got[0], `"error":"it broke","is_interrupt":false`) || strings.Contains(got[0], "tool_response") {
		t.Errorf("hooks read:\n%s", strings.Join(got, "\n"))
	}
}
