package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"go.uber.org/goleak"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashServerEnv) == "1" { // the stdio MCP server of mcprestart_test.go
		crashServer()
		return
	}
	goleak.VerifyTestMain(m)
}

// taped wraps a provider and keeps every request it gets.
type taped struct {
	provider.Provider
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *taped) Stream(ctx context.Context, req provider.Request, on func(provider.Delta)) (*provider.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req, on)
}

func (r *taped) last(t *testing.T) provider.Request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("no model request")
	}
	return r.reqs[len(r.reqs)-1]
}

func scripted(t *testing.T, js string) *taped {
	t.Helper()
	p, err := script.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &taped{Provider: p}
}

func options(t *testing.T, root, dir string, p provider.Provider) Options {
	return Options{SessionDir: dir, Root: root, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }, Warn: func(s string) { t.Log(s) }}
}

func resultText(t *testing.T, path, callID string) tool.Result {
	t.Helper()
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == callID {
			return *r.Result
		}
	}
	t.Fatalf("no result for %s", callID)
	return tool.Result{}
}

// A reloaded session knows what the live one knew: the files it read (an edit
// of one read before the reload works), the mode last set, the job numbering
// (the next job is not job-1 again), the working directory a command left
// (after cd sub the next command runs in sub), and the model context. Its next
// model request is byte for byte the one the live session sent, system prompt
// included, though the date and the root's AGENTS.md changed since. Its usage,
// context fill and cost are the live one's, though it is configured with
// another model: every call, the compaction's included, is priced at the model
// that made it (before and after a /model).
func TestReloadedSessionBehavesLikeTheLiveOne(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("colour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Use British spelling.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := scripted(t, `{"turns": [
		{"text": "Reading.", "tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}], "input_tokens": 1000, "output_tokens": 20},
		{"tool_calls": [{"id": "j1", "name": "bash", "args": {"command": "sleep 0.05", "run_in_background": true}}], "input_tokens": 1100, "output_tokens": 30},
		{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "cd sub"}}], "input_tokens": 1200, "output_tokens": 25},
		{"text": "Read it.", "input_tokens": 1300, "output_tokens": 5},
		{"text": "Summary: read a.txt, cd sub.", "input_tokens": 1400, "output_tokens": 40},
		{"text": "Still here.", "input_tokens": 900, "output_tokens": 10}]}`)
	day1 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	o := options(t, root, dir, p)
	o.Model = "claude-sonnet-4-5"
	o.Now = func() time.Time { return day1 }
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "read a.txt"); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"compact", ""}, {"model", "claude-haiku-4-5"}} {
		if r, err := s.Submit(t.Context(), Input{Text: "/" + c[0] + " " + c[1], Where: Both}); err != nil {
			t.Fatalf("/%s: %q, %v", c[0], r.Text, err)
		}
	}
	if _, err := s.Prompt(t.Context(), "still there?"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(agent.ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	liveStatus := s.Status()
	sonnet := (1000+1100+1200+1300+1400)*3/1e6 + (20+30+25+5+40)*15/1e6
	haiku := 900*1/1e6 + 10*5/1e6
	if liveStatus.InputTokens != 6900 || liveStatus.OutputTokens != 130 || !near(liveStatus.Cost, sonnet+haiku) ||
		liveStatus.Unpriced || liveStatus.ContextTokens == 0 {
		t.Errorf("the live usage = %+v, want 6900 in, 130 out, $%.6f, a context fill", liveStatus, sonnet+haiku)
	}
	path := s.Path()
	// The log as it is now, to reload beside the live session's next prompt.
	snapshot, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// What the live session would send next.
	p.Provider, _ = script.Parse([]byte(`{"turns": [{"text": "ok"}]}`))
	if _, err := s.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	liveReq := p.last(t)
	live := liveReq.Messages
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Another day, other instructions: the session still sends what it sent.
	day2 := day1.Add(50 * time.Hour)
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Use American spelling.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snapDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(snapDir, filepath.Base(path)), snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	ps := scripted(t, `{"turns": [{"text": "ok"}]}`)
	so := options(t, root, snapDir, ps)
	so.Model = "claude-opus-4-1" // configured since with a dearer model
	so.Now = func() time.Time { return day2 }
	snap, err := Load(so, filepath.Join(snapDir, filepath.Base(path)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Status(); got.InputTokens != liveStatus.InputTokens || got.OutputTokens != liveStatus.OutputTokens ||
		got.ContextTokens != liveStatus.ContextTokens || got.Window != liveStatus.Window || !near(got.Cost, liveStatus.Cost) ||
		got.Unpriced != liveStatus.Unpriced || got.Model != liveStatus.Model {
		t.Errorf("the reloaded session's status = %+v, want the live one's usage, fill and cost %+v", got, liveStatus)
	}
	if _, err := snap.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if want, got := requestBytes(t, liveReq), requestBytes(t, ps.last(t)); got != want {
		t.Errorf("the reloaded session's request differs from the live one's:\nlive:     %s\nreloaded: %s", want, got)
	}
	if !strings.Contains(liveReq.System, "British") {
		t.Errorf("the live system prompt lacks the root's AGENTS.md:\n%s", liveReq.System)
	}

	p2 := scripted(t, `{"turns": [
		{"tool_calls": [
			{"id": "e1", "name": "edit", "args": {"path": "../a.txt", "old_string": "colour", "new_string": "color"}},
			{"id": "j2", "name": "bash", "args": {"command": "sleep 0.05", "run_in_background": true}},
			{"id": "w1", "name": "bash", "args": {"command": "pwd"}}]},
		{"text": "Done."}]}`)
	o = options(t, root, dir, p2)
	o.Mode = agent.ModeDefault // a loaded session keeps its own mode
	o.Ask = true
	o.Now = func() time.Time { return day2 }
	var replayed int
	r, err := Load(o, path, func(*Session, session.Record) error { replayed++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var asked []string
	sub := r.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			asked = append(asked, e.Permission.Request.Tool)
			e.Permission.Answer(agent.AllowOnce)
		}
	})
	defer sub.Close()
	if replayed == 0 {
		t.Error("Load replayed nothing")
	}
	if r.Mode() != agent.ModeAcceptEdits {
		t.Errorf("mode after reload = %s, want accept-edits (the last one set)", r.Mode())
	}
	if _, err := r.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	// The reloaded context is the live one, then the live answer and the new prompt.
	restored := describe(p2.reqs[0].Messages)
	if want := describe(live) + "assistant: text//ok | user: text//next | "; restored != want {
		t.Errorf("reloaded context differs from the live one:\nwant:     %s\nreloaded: %s", want, restored)
	}
	if p2.reqs[0].System != liveReq.System {
		t.Errorf("reloaded system prompt differs from the live one:\nwant:     %s\nreloaded: %s", liveReq.System, p2.reqs[0].System)
	}
	// accept-edits: the edit ran unasked, the background command was asked
	// about (pwd is known to be harmless).
	if !slices.Equal(asked, []string{"bash"}) {
		t.Errorf("asked about %q, want only the command (accept-edits)", asked)
	}
	if res := resultText(t, path, "e1"); res.IsError {
		t.Errorf("edit of a file read before the reload: %s", res.TextOf())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "color\n" {
		t.Errorf("a.txt = %q", b)
	}
	if res := resultText(t, path, "j2"); !strings.Contains(res.TextOf(), "job-2") {
		t.Errorf("the first job after the reload: %q, want job-2", res.TextOf())
	}
	if res, want := resultText(t, path, "w1"), filepath.Join(r.Root(), "sub"); !strings.HasPrefix(res.TextOf(), want+"\n") {
		t.Errorf("pwd after the reload = %q, want %s (where cd sub left the live session)", res.TextOf(), want)
	}
}

// requestBytes is a model request as the provider gets it, encoded.
func requestBytes(t *testing.T, req provider.Request) string {
	t.Helper()
	b, err := json.Marshal(req, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func describe(msgs []provider.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role) + ":")
		for _, p := range m.Parts {
			b.WriteString(" " + string(p.Type) + "/" + p.ID + "/" + p.Text)
		}
		b.WriteString(" | ")
	}
	return b.String()
}

// The stream delivers records in log order with the moments the log does not
// keep where they happened: the delta before the record it completes, a call's
// start after its tool_call record and before its result.
func TestStreamOrder(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [
		{"text": "Running.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "echo hi"}}]},
		{"text": "Done."}]}`)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	sub := s.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case KindRecord:
			if e.Record.Type != session.TypeProgress {
				got = append(got, string(e.Record.Type))
			}
		case KindDelta:
			if len(got) == 0 || got[len(got)-1] != "delta" {
				got = append(got, "delta")
			}
		case KindModelRequest:
			got = append(got, "request")
		case KindCallStarted:
			got = append(got, "started "+e.CallID)
		case KindPermission, KindUsage, KindStatus, KindQuestion, KindChild, KindNotice:
		}
	})
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if !sub.Flush(10 * time.Second) {
		t.Fatal("the subscriber did not catch up")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-sub.Done()
	want := []string{"checkpoint", "user", "request", "delta", "assistant", "tool_call", "started c1", "tool_result",
		"request", "delta", "assistant", "turn_end", "checkpoint"}
	if !slices.Equal(got, want) {
		t.Errorf("stream:\n%q\nwant:\n%q", got, want)
	}
}

// A subscriber that stops handling events (a client that stopped reading) holds
// up neither the turn nor Close, and drops progress rather than growing without
// bound.
func TestStuckSubscriberHoldsNothingUp(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "seq 1 300000"}}]},
		{"text": "Done."}]}`)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	stuck := make(chan struct{})
	defer close(stuck)
	s.Subscribe(func(Event) { <-stuck })
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(t.Context(), "go")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the turn waited for a stuck subscriber")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(turnWait + drainWait + 5*time.Second):
		t.Fatal("Close waited for a stuck subscriber")
	}
}

// Under pressure a subscriber's queue drops progress, never the records replay
// shows, and stays bounded.
func TestQueueDropsOnlyProgress(t *testing.T) {
	b := newBus()
	stuck := make(chan struct{})
	sub := b.subscribe(func(Event) { <-stuck })
	const n = 3 * maxQueue
	for i := range n {
		rec := session.Record{Type: session.TypeProgress, CallID: "c", Chunk: "x"}
		if i%100 == 0 {
			rec = session.Record{Type: session.TypeToolResult, CallID: "c"}
		}
		b.publish(Event{Kind: KindRecord, Record: rec})
	}
	sub.mu.Lock()
	queued, results := len(sub.q), 0
	for _, q := range sub.q {
		if q.e.Record.Type == session.TypeToolResult {
			results++
		}
	}
	sub.mu.Unlock()
	if queued > maxQueue+n/100 {
		t.Errorf("queued %d events, want at most %d", queued, maxQueue+n/100)
	}
	if want := n / 100; results != want {
		t.Errorf("kept %d results, want all %d", results, want)
	}
	if sub.Dropped() == 0 {
		t.Error("nothing was dropped")
	}
	close(stuck)
	b.close(time.Second)
	<-sub.Done()
}

// Nothing starts after Close: a prompt is refused and the tools' state is
// closed, so a job a late call would start never runs.
func TestNoStateAfterClose(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	s, err := Create(options(t, root, dir, scripted(t, `{"turns": [{"text": "never"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("Prompt after Close = %v, want ErrClosed", err)
	}
	if _, err := s.RunTool(t.Context(), "bash", []byte(`{"command":"true"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("RunTool after Close = %v, want ErrClosed", err)
	}
	if err := s.SetMode(agent.ModeBypass); !errors.Is(err, ErrClosed) {
		t.Errorf("SetMode after Close = %v, want ErrClosed", err)
	}
}
