package demo_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
	dshfs "github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/tool/todo"
	"github.com/dsh-dev/dsh/internal/workspace"
)

func TestInstallCopiesTheProject(t *testing.T) {
	dir := t.TempDir()
	if err := demo.Install(dir); err != nil {
		t.Fatal(err)
	}
	var n int
	err := fs.WalkDir(demo.Project, "project", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		want, err := demo.Project.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(p, "project/")))
		if err != nil {
			return err
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the embedded file", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 || n > 5 {
		t.Errorf("the sample project has %d files, want 3 to 5", n)
	}
}

func TestInstallNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "README.md")
	if err := os.WriteFile(mine, []byte("my own readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := demo.Install(dir); err == nil {
		t.Error("Install into a directory holding README.md succeeded")
	}
	if b, _ := os.ReadFile(mine); string(b) != "my own readme\n" {
		t.Errorf("README.md was overwritten: %q", b)
	}
}

// scriptCall is a tool call of the demo script, read back from its JSON.
type scriptCall struct {
	ID   string         `json:"id"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

func scriptCalls(t *testing.T) []scriptCall {
	t.Helper()
	var s struct {
		Turns []struct {
			ToolCalls []scriptCall `json:"tool_calls"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(demo.Script, &s); err != nil {
		t.Fatal(err)
	}
	var out []scriptCall
	for _, turn := range s.Turns {
		out = append(out, turn.ToolCalls...)
	}
	return out
}

// The demo runs end to end with the real tools: every call succeeds except the grep
// that is meant to fail, every tool is used, and the files change as the script says.
// The script names its jobs job-1 and job-2: job ids are numbered per session.
func TestDemoRunsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	if err := demo.Install(dir); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	tools := tool.NewSession("demo", ws)
	defer tools.Close()
	log, err := session.Create(t.TempDir(), "demo", ws.Root(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	reg := tool.NewRegistry(append([]tool.Tool{dshfs.Read(), dshfs.Write(), dshfs.Edit(), todo.Tool()}, bash.Tools()...)...)
	prov, err := script.Parse(demo.Script)
	if err != nil {
		t.Fatal(err)
	}
	instr, err := agent.LoadInstructions(ws.Root())
	if err != nil || instr == "" {
		t.Fatalf("the sample project's AGENTS.md: %q, %v", instr, err)
	}
	a := agent.New(agent.Config{
		Provider: prov, Registry: reg, Log: log, Tools: tools, Mode: agent.ModeBypass,
		System: agent.SystemPrompt(agent.PromptInfo{Root: ws.Root(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
			Date: time.Now(), Instructions: instr, Guidance: guidance(reg)}),
	})
	stop, err := a.Prompt(t.Context(), demo.Prompt)
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}

	recs, err := session.ReadFile(log.Path())
	if err != nil {
		t.Fatal(err)
	}
	calls := scriptCalls(t)
	used := map[string]bool{}
	results := map[string]tool.Result{}
	var plans [][]tool.PlanEntry
	for _, r := range recs {
		switch r.Type {
		case session.TypeToolCall:
			used[r.Name] = true
		case session.TypeToolResult:
			results[r.CallID] = *r.Result
		case session.TypePlan:
			plans = append(plans, r.Plan)
		case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
			session.TypeProgress, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeDamaged, session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook,
			session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		}
	}
	for _, tl := range reg.Tools() {
		if n := tl.Name(); !used[n] {
			t.Errorf("the demo never uses %s", n)
		}
	}
	var failing []string
	for _, c := range calls {
		res, ok := results[c.ID]
		if !ok {
			t.Errorf("%s (%s) has no result", c.ID, c.Name)
			continue
		}
		if res.IsError {
			failing = append(failing, c.ID)
			if c.Args["command"] != "grep -n lenght *.py" {
				t.Errorf("%s %s failed: %s", c.ID, c.Name, res.TextOf())
			}
		}
	}
	if len(failing) != 1 {
		t.Errorf("failing calls %v, want exactly the grep", failing)
	}
	for _, c := range calls {
		if c.Name == "job_output" && !strings.Contains(results[c.ID].TextOf(), "self-check passed") {
			t.Errorf("job_output did not see the job finish: %q", results[c.ID].TextOf())
		}
	}
	if len(plans) != 2 || !allCompleted(plans[1]) || allCompleted(plans[0]) {
		t.Errorf("plans = %+v, want a plan and then the same list completed", plans)
	}

	// The files are the originals changed exactly as the script's calls say.
	orig := func(name string) string {
		b, err := demo.Project.ReadFile("project/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := map[string]string{}
	for _, c := range calls {
		path, _ := c.Args["path"].(string)
		switch c.Name {
		case "edit":
			cur, ok := want[path]
			if !ok {
				cur = orig(path)
			}
			old, neu := c.Args["old_string"].(string), c.Args["new_string"].(string)
			if n := strings.Count(cur, old); n == 0 || (n > 1 && c.Args["replace_all"] != true) {
				t.Fatalf("%s: old_string occurs %d times", c.ID, n)
			}
			want[path] = strings.ReplaceAll(cur, old, neu)
		case "write":
			want[path] = c.Args["content"].(string)
		}
	}
	for _, p := range []string{"greet.py", "shapes.py", "README.md", "CHANGELOG.md"} {
		if _, ok := want[p]; !ok {
			t.Errorf("the script does not change %s", p)
		}
	}
	for path, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Error(err)
			continue
		}
		if string(got) != w {
			t.Errorf("%s:\n%s\nwant:\n%s", path, got, w)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "shapes.py")); strings.Contains(string(got), "lenght") || strings.Count(string(got), "length") != 5 {
		t.Errorf("shapes.py after replace_all:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "CHANGELOG.md")); err != nil || slices.Contains(listProject(t), "CHANGELOG.md") {
		t.Errorf("CHANGELOG.md must be new: %v", err)
	}
}

func allCompleted(p []tool.PlanEntry) bool {
	for _, e := range p {
		if e.Status != "completed" {
			return false
		}
	}
	return len(p) > 0
}

func listProject(t *testing.T) []string {
	t.Helper()
	es, err := demo.Project.ReadDir("project")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func guidance(reg *tool.Registry) []string {
	var g []string
	for _, tl := range reg.Tools() {
		g = append(g, tl.Guidance())
	}
	return g
}
