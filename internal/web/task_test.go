package web

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
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

// subagentSession runs a real turn with two subagents into dir and returns
// the parent session's id.
func subagentSession(t *testing.T, dir string) string {
	t.Helper()
	ws := t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := script.Parse([]byte(parallelTasks))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: ws, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), "read both files"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.ID()
}

// TestSubagentTimeline: a task's card holds its subagent's timeline, read
// from the child session's log, in a real browser: each task's nested
// timeline shows its own subagent's call and no other, its total in the
// session's usage, and a link to the child session's own page.
func TestSubagentTimeline(t *testing.T) {
	dir := t.TempDir()
	_, ts := testServer(t, dir)
	id := subagentSession(t, dir)
	ctx, consoleProblems := browser(t)
	do(t, ctx, "open the session", chromedp.Navigate(ts.URL+"/s/"+id+"?token="+testToken), chromedp.WaitReady(chromedp.CSS("#end")))
	nested := eval[[]string](t, ctx, `[...document.querySelectorAll('article[data-tool="task"]')].map(a =>
		a.id + ': ' + [...a.querySelectorAll('.timeline.nested article[data-tool]')].map(n => n.dataset.tool + ' ' + n.dataset.state).join(','))`)
	if want := []string{"c-t1: read done", "c-t2: grep done"}; !slices.Equal(nested, want) {
		t.Errorf("nested timelines %q, want %q", nested, want)
	}
	if got := eval[string](t, ctx, `document.querySelector('#c-t1 [data-card="task-result"] > details > summary').textContent`); !strings.HasPrefix(got, "explore · 1 tool call · 66 tokens") {
		t.Errorf("the task's summary is %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#c-t2 [data-card="task-result"] .md').textContent.trim()`); got != "b.txt says beta." {
		t.Errorf("the task's answer is %q", got)
	}
	if !eval[bool](t, ctx, `getComputedStyle(document.querySelector('.timeline.nested')).borderLeftStyle === 'solid'`) {
		t.Error("the nested timeline is not set off")
	}
	if got := eval[string](t, ctx, `document.getElementById('usage').textContent`); !strings.Contains(got, "440") {
		t.Errorf("the session's usage %q does not count the subagents' tokens (440 in)", got)
	}
	screenshot(t, ctx, artifacts(t), "subagents.png", false)
	child := eval[string](t, ctx, `document.querySelector('#c-t1 .timeline.nested').dataset.session`)
	// The parent's page has an #end too: it is marked, and the child's waited for.
	eval[string](t, ctx, `document.body.dataset.left = "yes"`)
	do(t, ctx, "follow the link to the child", chromedp.Click(chromedp.CSS(`#c-t1 details.nested > summary a`)),
		chromedp.WaitReady(chromedp.CSS(`body:not([data-left]) #end`)))
	if u := eval[string](t, ctx, `location.pathname`); u != "/s/"+child {
		t.Errorf("the link leads to %s, want the child session %s", u, child)
	}
	if got := eval[[]string](t, ctx, `[...document.querySelectorAll('article[data-tool]')].map(a => a.dataset.tool)`); !slices.Equal(got, []string{"read"}) {
		t.Errorf("the child's own page shows %q", got)
	}
	if p := consoleProblems(); len(p) > 0 {
		t.Errorf("console: %q", p)
	}
}
