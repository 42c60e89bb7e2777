package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
)

// The status says what the session does, for the consumers to show as it
// is: working while a turn runs (a job_output waiting for its job too),
// waiting while a permission is asked, idle when the turn has ended.
func TestStatusState(t *testing.T) {
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"name": "write", "args": {"path": "a.txt", "content": "a\n"}}]},
		{"tool_calls": [{"name": "bash", "args": {"command": "while [ ! -e go ]; do sleep 0.01; done; echo went", "run_in_background": true}}]},
		{"tool_calls": [{"name": "job_output", "args": {"job_id": "job-1", "wait_ms": 60000}}]},
		{"text": "done"}
	]}`)
	root, dir := t.TempDir(), t.TempDir()
	o := options(t, root, dir, p)
	o.Mode, o.Ask = agent.ModeAcceptEdits, true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if st := s.Status().State; st != StateIdle {
		t.Fatalf("a new session's state = %q, want idle", st)
	}
	var (
		mu     sync.Mutex
		states []State
		asked  []State // the state when each permission was shown
		polled []State // the state while job_output waits
	)
	sub := s.Subscribe(func(e Event) {
		switch {
		case e.Kind == KindStatus:
			mu.Lock()
			if n := len(states); n == 0 || states[n-1] != e.Status.State {
				states = append(states, e.Status.State)
			}
			mu.Unlock()
		case e.Kind == KindPermission:
			mu.Lock()
			asked = append(asked, s.Status().State)
			mu.Unlock()
			e.Permission.Answer(agent.AllowOnce)
		case e.Kind == KindRecord && e.Record.Type == session.TypeToolCall && e.Record.Name == "job_output":
			// The call is logged before it runs; it waits for the job
			// until the job sees the file.
			mu.Lock()
			polled = append(polled, s.Status().State)
			mu.Unlock()
			if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	defer sub.Close()
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	want := []State{StateWorking, StateWaiting, StateWorking, StateIdle}
	if !slices.Equal(states, want) {
		t.Errorf("the states published = %q, want %q", states, want)
	}
	if !slices.Equal(asked, []State{StateWaiting}) {
		t.Errorf("while asked the state was %q, want waiting (one question: the command)", asked)
	}
	if !slices.Equal(polled, []State{StateWorking}) {
		t.Errorf("while job_output waits the state was %q, want working", polled)
	}
	if st := s.Status().State; st != StateIdle {
		t.Errorf("after the turn the state = %q, want idle", st)
	}
}
