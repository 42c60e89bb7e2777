package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// A permission prompt that was cancelled leaves no reader of stdin behind: the
// answer typed for the next prompt reaches the next prompt.
func TestCancelledPromptLeavesNoStdinReader(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [
		{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch first"}}]},
		{"tool_calls": [{"id": "c2", "name": "bash", "args": {"command": "touch second"}}]},
		{"text": "done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: root, Mode: agent.ModeDefault, Ask: true,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	in, typed := io.Pipe()
	defer func() { _ = typed.Close() }()
	var errb bytes.Buffer
	ask := &termAsker{io: IO{Err: &errb}, lines: stdinLines(in)}
	ctx, cancel := context.WithCancel(t.Context())
	asked := make(chan struct{}, 2)
	sub := s.Subscribe(func(e host.Event) {
		if e.Kind == host.KindPermission {
			asked <- struct{}{}
			ask.ask(e.Permission)
		}
	})
	defer sub.Close()
	go func() {
		<-asked
		cancel() // Ctrl-C at the first prompt, nothing typed
	}()
	if stop, err := s.Prompt(ctx, "first"); err != nil || stop != agent.StopCancelled {
		t.Fatalf("first turn = %v, %v", stop, err)
	}
	go func() {
		<-asked
		_, _ = typed.Write([]byte("y\n"))
	}()
	done := make(chan agent.StopReason, 1)
	go func() {
		stop, _ := s.Prompt(t.Context(), "second")
		done <- stop
	}()
	select {
	case stop := <-done:
		if stop != agent.StopEndTurn {
			t.Fatalf("second turn = %v", stop)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the answer to the second prompt never arrived")
	}
	res := resultOf(t, s.Path(), "c2")
	if res.IsError || strings.Contains(res.TextOf(), "rejected") {
		t.Errorf("the second command did not run: %q (stderr %q)", res.TextOf(), errb.String())
	}
}

func resultOf(t *testing.T, path, callID string) tool.Result {
	t.Helper()
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == callID && r.Result != nil {
			return *r.Result
		}
	}
	t.Fatalf("no result for %s", callID)
	return tool.Result{}
}

// A compaction and nested instructions show in the terminal where they happened.
func TestContextRecordsInTheTerminal(t *testing.T) {
	var out bytes.Buffer
	tc := newTermConsumer(&out, toolset.New(toolset.Options{}), termui.Options{Width: 80}, nil)
	for _, r := range []session.Record{
		{Type: session.TypeCompaction, Text: "the summary of it all", Focus: "tests"},
		{Type: session.TypeInstructions, Path: "sub/AGENTS.md", Text: "use tabs"},
	} {
		if err := tc.handle(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"Compacted the conversation (focus: tests)", "the summary of it all", "sub/AGENTS.md", "use tabs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

// lockedBuffer is stdout and stderr in one, in the order they were written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dsh run shows the change before it asks to allow it, and once: the result
// after the answer says it was applied as shown.
func TestRunShowsTheChangeBeforeItAsks(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}]},
		{"tool_calls": [{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
		{"text": "done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: root, Mode: agent.ModeDefault, Ask: true,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var both lockedBuffer
	stdio := IO{In: strings.NewReader("y\n"), Out: &both, Err: &both, Getenv: func(string) string { return "" }, Now: time.Now}
	if _, err := runAgentTurn(context.Background(), stdio, s, agentRun{Prompt: "edit it", Output: "text"}); err != nil {
		t.Fatal(err)
	}
	out := both.String()
	hunk, ask := strings.Index(out, "- two"), strings.Index(out, "Allow edit?")
	if hunk < 0 || ask < 0 || hunk > ask {
		t.Errorf("the change should show before the question:\n%s", out)
	}
	if n := strings.Count(out, "- two"); n != 1 || !strings.Contains(out, "applied as shown") {
		t.Errorf("the change shows %d times, want once, then 'applied as shown':\n%s", n, out)
	}
}

// The demo's sample project goes with it: the log is all a replay needs.
func TestDemoRemovesItsProject(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out, errb lockedBuffer
	stdio := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Now: time.Now}
	if err := runDemo(context.Background(), stdio, demoOptions{Color: "never", SessionDir: t.TempDir()}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v in the temporary directory", left)
	}
	if !strings.Contains(out.String(), "now removed") {
		t.Errorf("the demo should say its project is gone:\n%s", out.String())
	}
}
