package agent

import (
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
)

// The user's rules against the real bash tool in every mode: a deny holds
// even in bypass and names its rule; ask asks even in bypass; allow runs
// unasked where the mode would ask, but lifts no refusal of read-only.
func TestPermissionRules(t *testing.T) {
	for _, tt := range []struct {
		mode    Mode
		cmd     string
		asked   bool
		errText string // in the result; "" it ran
	}{
		{ModeBypass, "echo a; rm -rf nothing-here", false, `Denied by the permission rule "Bash(rm -rf:*)" of test`},
		{ModeDefault, "env X=1 rm -rf nothing-here", false, `"Bash(rm -rf:*)"`},
		{ModeBypass, "touch pushed", true, ""},
		{ModeDefault, "touch allowed", false, ""},
		{ModeDefault, "touch allowed; touch other", true, ""},
		{ModeDefault, "touch other", true, ""},
		{ModeReadOnly, "touch allowed", false, "read-only mode"},
		{ModeDefault, "$CMD true", true, ""},
	} {
		t.Run(string(tt.mode)+" "+tt.cmd, func(t *testing.T) {
			e := newEnv(t)
			var rs []rules.Rule
			for _, r := range []struct {
				e    rules.Effect
				text string
			}{{rules.Deny, "Bash(rm -rf:*)"}, {rules.Ask, "Bash(touch pushed)"}, {rules.Allow, "Bash(touch allowed)"}} {
				rule, err := rules.Parse(r.text, r.e, "test", rules.Base{Root: e.dir, Cwd: e.dir})
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, rule)
			}
			set := rules.NewSet(rs...)
			fp := &fakeProvider{turns: []turnFunc{reply(use("1", "bash", `{"command":`+quote(tt.cmd)+`}`)), reply(text("ok"))}}
			ask := &asker{}
			a := New(Config{Provider: fp, Registry: tool.NewRegistry(bash.Tools()...), Log: e.log, Tools: e.tools, Mode: tt.mode,
				Permit: ask.permit, Rules: func() *rules.Set { return set }})
			if _, err := a.Prompt(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			if got := len(ask.asked) > 0; got != tt.asked {
				t.Errorf("asked %q, want asked=%v", ask.asked, tt.asked)
			}
			res := resultOf(t, e.records(t), "1")
			switch {
			case tt.errText == "" && res.IsError:
				t.Errorf("it did not run: %s", res.TextOf())
			case tt.errText != "" && (!res.IsError || !strings.Contains(res.TextOf(), tt.errText)):
				t.Errorf("result %q, want an error with %q", res.TextOf(), tt.errText)
			}
		})
	}
}
