package control

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// live opens a session served on its control socket, whose model calls
// bash once (asking, in the default mode) and then says done.
func live(t *testing.T, turns string) (*host.Session, string) {
	t.Helper()
	p, err := script.Parse([]byte(turns))
	if err != nil {
		t.Fatal(err)
	}
	root, dir := t.TempDir(), t.TempDir()
	s, err := host.Create(host.Options{SessionDir: dir, Root: root, Mode: host.ModeDefault, Ask: true, Client: "terminal",
		Provider: func() (provider.Provider, error) { return p, nil }, Warn: func(s string) { t.Error(s) }, Live: Serve})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

const askOnce = `{"turns": [
	{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch made"}}]},
	{"text": "done"}]}`

func dial(t *testing.T, dir, id, from string) *Client {
	t.Helper()
	c, err := DialSession(t.Context(), dir, id, DialOptions{From: from})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// next is the next event of c of kind k, the others skipped.
func next(t *testing.T, c *Client, k host.Kind) host.Event {
	t.Helper()
	for e := range c.Events() {
		if e.Kind == k {
			return e
		}
	}
	t.Fatalf("the events ended before a %d event: %v", k, c.Err())
	return host.Event{}
}

// TestFirstAnswerWins: a permission request shows in the session's own
// consumer and in every client; the first answer decides it, the others see
// it end, and the log says who answered.
func TestFirstAnswerWins(t *testing.T) {
	s, dir := live(t, askOnce)
	local := make(chan *host.Permission, 1)
	sub := s.Subscribe(func(e host.Event) {
		if e.Kind == host.KindPermission {
			local <- e.Permission
		}
	})
	defer sub.Close()
	web, att := dial(t, dir, s.ID(), "web"), dial(t, dir, s.ID(), "attach")

	turn := make(chan error, 1)
	go func() {
		_, err := s.Submit(context.Background(), host.Input{Text: "go", Where: host.Terminal})
		turn <- err
	}()
	mine := <-local
	pw := next(t, web, host.KindPermission).Permission
	pa := next(t, att, host.KindPermission).Permission
	if pw.Request.CallID != "c1" || pa.Request.Tool != "bash" {
		t.Fatalf("clients were asked about %q/%q, want the bash call c1", pw.Request.CallID, pa.Request.Tool)
	}
	pa.Answer(host.AllowOnce)
	for _, p := range []*host.Permission{mine, pw, pa} {
		<-p.Done() // ended everywhere
	}
	if mine.AnswerFrom(host.Reject, "") {
		t.Error("a second answer was taken")
	}
	if err := <-turn; err != nil {
		t.Fatal(err)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var decided []string
	ran := false
	for _, r := range recs {
		switch {
		case r.Type == session.TypeDecision:
			decided = append(decided, r.Decision+" by "+r.From)
		case r.Type == session.TypeToolResult && r.CallID == "c1" && !r.Result.IsError:
			ran = true
		}
	}
	if strings.Join(decided, ",") != "allow by attach" || !ran {
		t.Errorf("decisions %v, call ran %v; want one allow by attach, and the call run", decided, ran)
	}
}

// TestLateAnswerIsRefused: an answer to a request that no longer waits is
// told so, in words.
func TestLateAnswerIsRefused(t *testing.T) {
	s, dir := live(t, askOnce)
	c := dial(t, dir, s.ID(), "web")
	go func() { _, _ = s.Submit(context.Background(), host.Input{Text: "go", Where: host.Terminal}) }()
	p := next(t, c, host.KindPermission).Permission
	var id string
	c.mu.Lock()
	for k := range c.waiting {
		id = k
	}
	c.mu.Unlock()
	p.Answer(host.Reject)
	<-p.Done()
	_, err := c.call(t.Context(), Request{Op: OpPermission, Waiting: id, Decision: DecisionAllow})
	if err == nil || !strings.Contains(err.Error(), "answered") {
		t.Errorf("late answer: %v, want it refused", err)
	}
}

// TestJoinLateSeesHistoryAndWaiting: a client that joins while a request
// waits gets the records so far, then the request, and can answer it.
func TestJoinLateSeesHistoryAndWaiting(t *testing.T) {
	s, dir := live(t, askOnce)
	local := make(chan *host.Permission, 1)
	sub := s.Subscribe(func(e host.Event) {
		if e.Kind == host.KindPermission {
			local <- e.Permission
		}
	})
	defer sub.Close()
	turn := make(chan error, 1)
	go func() {
		_, err := s.Submit(context.Background(), host.Input{Text: "go", Where: host.Terminal})
		turn <- err
	}()
	mine := <-local
	var replayed []session.RecordType
	c, err := DialSession(t.Context(), dir, s.ID(), DialOptions{From: "attach", Replay: func(r session.Record) { replayed = append(replayed, r.Type) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if len(replayed) < 3 || replayed[0] != session.TypeHeader || !containsType(replayed, session.TypeToolCall) {
		t.Errorf("replayed %v, want the header, the prompt and the call", replayed)
	}
	p := next(t, c, host.KindPermission).Permission
	p.Answer(host.AllowOnce)
	<-mine.Done()
	if err := <-turn; err != nil {
		t.Fatal(err)
	}
}

func containsType(ts []session.RecordType, t session.RecordType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// TestSubmitWhileATurnRuns: a second client's prompt waits for the turn
// that runs, then runs: the session is never driven by two turns at once.
func TestSubmitWhileATurnRuns(t *testing.T) {
	s, dir := live(t, `{"turns": [
		{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch made"}}]},
		{"text": "first done"},
		{"text": "second done"}]}`)
	local := make(chan *host.Permission, 1)
	sub := s.Subscribe(func(e host.Event) {
		if e.Kind == host.KindPermission {
			local <- e.Permission
		}
	})
	defer sub.Close()
	c := dial(t, dir, s.ID(), "web")
	first := make(chan error, 1)
	go func() {
		_, err := s.Submit(context.Background(), host.Input{Text: "one", Where: host.Terminal})
		first <- err
	}()
	p := <-local // the first turn waits for an answer
	second := make(chan host.Answer, 1)
	go func() {
		a, err := c.Submit(context.Background(), host.Input{Text: "two", Where: host.Terminal})
		if err != nil {
			t.Error(err)
		}
		second <- a
	}()
	// The second prompt is queued: nothing of it is logged while the first
	// turn waits.
	if !s.Running() {
		t.Fatal("the first turn is not running")
	}
	p.Answer(host.AllowOnce)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if a := <-second; !a.Turn || a.Stop != host.StopEndTurn {
		t.Errorf("second submit = %+v, want a turn that ended", a)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range recs {
		if r.Type == session.TypeUser {
			order = append(order, "user "+r.Text)
		}
		if r.Type == session.TypeTurnEnd {
			order = append(order, "end")
		}
	}
	if got := strings.Join(order, ", "); got != "user one, end, user two, end" {
		t.Errorf("turns: %s, want one after the other", got)
	}
}

// TestSocketModes: the socket is 0600 in a 0700 directory, and removed when
// the session closes.
func TestSocketModes(t *testing.T) {
	s, dir := live(t, askOnce)
	fi, err := os.Lstat(Path(dir, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a 0600 socket", fi.Mode())
	}
	di, err := os.Lstat(Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v, want 0700", di.Mode().Perm())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(Path(dir, s.ID())); !os.IsNotExist(err) {
		t.Errorf("socket after close: %v, want it gone", err)
	}
	if _, err := DialSession(t.Context(), dir, s.ID(), DialOptions{}); err == nil {
		t.Error("dialled a closed session")
	}
}

// TestLongSessionDir: a session directory longer than a socket address holds
// still works (the address goes through the directory's descriptor).
func TestLongSessionDir(t *testing.T) {
	p, _ := script.Parse([]byte(`{"turns": [{"text": "ok"}]}`))
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100), strings.Repeat("e", 100))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: t.TempDir(), Provider: func() (provider.Provider, error) { return p, nil },
		Warn: func(s string) { t.Error(s) }, Live: Serve})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	c := dial(t, dir, s.ID(), "web")
	if c.ID() != s.ID() {
		t.Errorf("joined %q, want %q", c.ID(), s.ID())
	}
	if err := c.Rename(t.Context(), "a long one"); err != nil {
		t.Fatal(err)
	}
	if s.Title() != "a long one" {
		t.Errorf("title %q after a client's rename", s.Title())
	}
}
