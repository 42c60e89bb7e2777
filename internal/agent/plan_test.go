package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
	"github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/tool/search"
)

// The plan mode refuses every change with the real tools, whatever the user
// would answer: file writes and edits, shell commands that write (sed -i, a
// redirection, a background job) and even one known to be safe; reads and
// searches run. The model is told it plans, and told no longer once the mode
// changes.
func TestPlanModeRefusesEveryChange(t *testing.T) {
	e := newEnv(t)
	a0 := filepath.Join(e.dir, "a.txt")
	if err := os.WriteFile(a0, []byte("colour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry(append(append([]tool.Tool{fs.Read(), fs.Write(), fs.Edit()}, search.Tools()...), bash.Tools()...)...)
	fp := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}, {"id": "g1", "name": "grep", "args": {"pattern": "colour"}}]},
		{"tool_calls": [
			{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "colour", "new_string": "color"}},
			{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "new\n"}},
			{"id": "b1", "name": "bash", "args": {"command": "sed -i s/colour/color/ a.txt"}},
			{"id": "b2", "name": "bash", "args": {"command": "echo x > out.txt"}},
			{"id": "b3", "name": "bash", "args": {"command": "touch bg.txt", "run_in_background": true}},
			{"id": "b4", "name": "bash", "args": {"command": "ls"}}]},
		{"text": "Planned."},
		{"text": "ok"}]}`)
	ask := &asker{answers: []Decision{AllowOnce, AllowOnce, AllowOnce, AllowOnce, AllowOnce, AllowOnce}}
	a := e.agent(fp, reg, ModePlan, ask.permit)
	if _, err := a.Prompt(t.Context(), "plan the spelling fix"); err != nil {
		t.Fatal(err)
	}
	if len(ask.asked) != 0 {
		t.Errorf("the plan mode asked about %q; it must refuse without asking", ask.asked)
	}
	recs := e.records(t)
	for _, id := range []string{"r1", "g1"} {
		if r := resultOf(t, recs, id); r.IsError {
			t.Errorf("%s was refused in plan mode: %s", id, r.TextOf())
		}
	}
	for _, id := range []string{"e1", "w1", "b1", "b2", "b3", "b4"} {
		if r := resultOf(t, recs, id); !r.IsError || !strings.Contains(r.TextOf(), "plan mode") || !strings.Contains(r.TextOf(), "plan tool") {
			t.Errorf("%s in plan mode: %+v", id, r)
		}
	}
	if b, err := os.ReadFile(a0); err != nil || string(b) != "colour\n" {
		t.Errorf("a.txt = %q, %v; want it unchanged", b, err)
	}
	for _, name := range []string{"b.txt", "out.txt", "bg.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s exists (%v): the plan mode let a change through", name, err)
		}
	}
	reqs := fp.requests()
	for i, r := range reqs {
		if !strings.Contains(r.System, "# Plan mode") {
			t.Errorf("request %d in plan mode lacks the plan mode section", i)
		}
	}
	if err := a.SetMode(ModeDefault); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Prompt(t.Context(), "go on"); err != nil {
		t.Fatal(err)
	}
	reqs = fp.requests()
	if last := reqs[len(reqs)-1].System; strings.Contains(last, "# Plan mode") {
		t.Error("the system prompt still says plan mode after the switch to default")
	}
}

// A fetch only reads: the plan mode asks about it (as the default mode does)
// instead of refusing it; another program's tool is asked about too.
func TestPlanModeGate(t *testing.T) {
	fetch := tool.Approval{Keys: []string{"fetch:example.com"}, Remember: true, ReadsOnly: true}
	tests := []struct {
		name string
		p    tool.Permission
		ap   tool.Approval
		want gate
	}{
		{"read", tool.PermNone, tool.Approval{}, gateRun},
		{"edit", tool.PermEdit, tool.Approval{}, gateRefuse},
		{"safe command", tool.PermExecute, tool.Approval{Safe: true, Remember: true, Keys: []string{"ls"}}, gateRefuse},
		{"confined command", tool.PermExecute, tool.Approval{Confined: true}, gateRefuse},
		{"fetch", tool.PermExecute, fetch, gateAsk},
		{"an edit that says it only reads", tool.PermEdit, tool.Approval{ReadsOnly: true}, gateRefuse},
		{"mcp", tool.PermExecute, tool.Approval{Opaque: true}, gateAsk},
	}
	for _, tt := range tests {
		if got := modeGate(ModePlan, tt.p, tt.ap, risk{}); got != tt.want {
			t.Errorf("%s: gate %d, want %d", tt.name, got, tt.want)
		}
	}
}
