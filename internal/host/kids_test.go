package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
)

// hooked is a provider that runs before on each request, with the text of the
// request's first user message, before the inner provider answers it.
type hooked struct {
	provider.Provider
	before func(ctx context.Context, first string, req provider.Request) error
}

func (h *hooked) Stream(ctx context.Context, req provider.Request, on func(provider.Delta)) (*provider.Response, error) {
	if err := h.before(ctx, firstUser(req), req); err != nil {
		return nil, err
	}
	return h.Provider.Stream(ctx, req, on)
}

func firstUser(req provider.Request) string {
	for _, m := range req.Messages {
		if m.Role != provider.RoleUser {
			continue
		}
		var b strings.Builder
		for _, p := range m.Parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// The user narrows the mode to read-only while a subagent runs (here, while
// its model answers): the write that answer asks for is refused at that call,
// and the child's log holds the mode it followed.
func TestNarrowedModeReachesRunningSubagent(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{".claude/agents/writer.md": "---\nname: writer\ndescription: Writes files.\ntools: Read, Write\n---\nWrite what you are told.\n"})
	sc := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Write", "prompt": "TASK-W: write x.txt", "subagent_type": "writer"}}]},
		{"match": "TASK-W", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "x.txt", "content": "x\n"}}]},
		{"match": "TASK-W", "text": "Could not write."},
		{"text": "ok"}]}`)
	var s *Session
	var once sync.Once
	p := &hooked{Provider: sc, before: func(_ context.Context, first string, _ provider.Request) error {
		var err error
		if strings.Contains(first, "TASK-W") {
			once.Do(func() { err = s.SetMode(agent.ModeReadOnly) })
		}
		return err
	}}
	o := options(t, root, dir, p) // bypass: the write would run unasked
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	var child string
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindChild {
			child = e.Child.Session
		}
	})
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
		t.Fatal("the subagent wrote x.txt after the mode was narrowed to read-only")
	}
	childLog := filepath.Join(filepath.Dir(path), child+".jsonl")
	if got := resultText(t, childLog, "w1").TextOf(); !strings.Contains(got, "read-only mode") {
		t.Errorf("the write's result %q, want a read-only refusal", got)
	}
	recs, err := session.ReadFile(childLog)
	if err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, r := range recs {
		if r.Type == session.TypeMode {
			modes = append(modes, r.Mode)
		}
	}
	if len(modes) != 1 || modes[0] != string(agent.ModeReadOnly) {
		t.Errorf("the child's mode records %q, want [read-only]", modes)
	}
}

// Forty task calls in one message: at most maxSubagents of their model calls
// run at once. Each child's call is held until the test lets one go, and only
// once as many as may run are waiting; without the bound all forty would.
func TestSubagentsAtOnceAreBounded(t *testing.T) {
	const n = 40
	root, dir := t.TempDir(), t.TempDir()
	var calls, turns []string
	for i := range n {
		calls = append(calls, fmt.Sprintf(`{"id": "t%d", "name": "task", "args": {"description": "Task %d", "prompt": "TASK-%d: say hi"}}`, i, i, i))
		turns = append(turns, fmt.Sprintf(`{"match": "TASK-%d:", "text": "hi %d"}`, i, i))
	}
	sc := scripted(t, `{"turns": [{"tool_calls": [`+strings.Join(calls, ",")+`]}, `+strings.Join(turns, ",")+`, {"text": "all done"}]}`)
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	waiting, most, released := 0, 0, 0
	p := &hooked{Provider: sc, before: func(ctx context.Context, first string, _ provider.Request) error {
		if !strings.HasPrefix(first, "TASK-") {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		waiting++
		most = max(most, waiting)
		cond.Broadcast()
		for released == 0 && ctx.Err() == nil {
			cond.Wait()
		}
		released--
		waiting--
		return ctx.Err()
	}}
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(t.Context(), "say hi forty times")
		done <- err
	}()
	mu.Lock()
	for left := n; left > 0; left-- {
		for waiting < min(maxSubagents, left) {
			cond.Wait()
		}
		released++
		cond.Broadcast()
	}
	mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if most != maxSubagents {
		t.Errorf("%d subagents' model calls ran at once, want at most (and here exactly) %d", most, maxSubagents)
	}
	if got := resultText(t, s.Path(), "t39").TextOf(); got != "hi 39" {
		t.Errorf("the last task's result %q", got)
	}
}
