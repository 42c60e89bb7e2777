package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

const parallelTasks = `{"turns": [
	{"tool_calls": [
		{"id": "t1", "name": "task", "args": {"description": "Read a", "prompt": "TASK-A: what does a.txt say?"}},
		{"id": "t2", "name": "task", "args": {"description": "Read b", "prompt": "TASK-B: what does b.txt say?"}}],
	 "input_tokens": 100, "output_tokens": 10},
	{"match": "TASK-A", "tool_calls": [{"id": "a1", "name": "read", "args": {"path": "a.txt"}}], "input_tokens": 20, "output_tokens": 2},
	{"match": "TASK-B", "tool_calls": [{"id": "b1", "name": "grep", "args": {"pattern": "beta", "path": "b.txt"}}], "input_tokens": 30, "output_tokens": 3},
	{"match": "TASK-A", "text": "a.txt says alpha.", "input_tokens": 40, "output_tokens": 4},
	{"match": "TASK-B", "text": "b.txt says beta.", "input_tokens": 50, "output_tokens": 5},
	{"text": "Both read.", "input_tokens": 200, "output_tokens": 20}]}`

// TestSubagentsNestInTheTerminal: dsh run draws each subagent's calls
// indented under its task as they come; dsh replay draws the same, read from
// the children's logs at each task's result (golden); a child's log replays
// on its own.
func TestSubagentsNestInTheTerminal(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := script.Parse([]byte(parallelTasks))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: root, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var live, errb bytes.Buffer
	if _, err := runAgentTurn(context.Background(), IO{In: strings.NewReader(""), Out: &live, Err: &errb, Getenv: func(string) string { return "" }, Now: time.Now},
		s, agentRun{Prompt: "read both", Output: "text"}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"  │ ● Read a.txt\n", "  │ ● Grep \"beta\" in b.txt\n", "  → explore · 1 tool call · 66 tokens\n"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("dsh run did not draw %q:\n%s", want, live.String())
		}
	}

	replay := func(target string) string {
		var out, errb bytes.Buffer
		io := IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Now: time.Now}
		if err := runReplay(context.Background(), io, replayOptions{Session: target, Color: "never"}); err != nil {
			t.Fatalf("replay: %v\n%s", err, errb.String())
		}
		return strings.ReplaceAll(out.String(), root, "{{root}}")
	}
	got := replay(s.Path())
	goldenText(t, "testdata/subagents-replay.golden", got)
	if strings.Count(got, "  │ ● ") != 2 {
		t.Errorf("the replay nests %d calls, want 2:\n%s", strings.Count(got, "  │ ● "), got)
	}

	infos, err := session.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var child string
	for _, in := range infos {
		if in.Parent != nil && strings.HasPrefix(in.FirstPrompt, "TASK-A") {
			child = in.Path
		}
	}
	if child == "" {
		t.Fatalf("no child session of TASK-A in %+v", infos)
	}
	own := replay(child)
	if !strings.Contains(own, "› TASK-A: what does a.txt say?") || !strings.Contains(own, "● Read a.txt") ||
		!strings.Contains(own, "a.txt says alpha.") || strings.Contains(own, "  │ ●") {
		t.Errorf("the child replayed on its own:\n%s", own)
	}
}

func goldenText(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
