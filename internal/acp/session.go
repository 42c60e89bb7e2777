package acp

import (
	"context"
	"errors"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// refreshInterval throttles the fallback console block of a running command.
const refreshInterval = 200 * time.Millisecond

// closeWait bounds how long closing a session waits for its turn to end. A
// command that ignores SIGTERM is killed after the bash tool's grace period,
// which this outlasts, so no process is left behind.
const closeWait = 3 * time.Second

// sess is one ACP session: a log, the tools' state and the agent, with the bridge
// subscribed to the log. Everything the client sees about the session comes from
// the log's records through the bridge, except the model's text while it streams
// and the moment a call starts running, which the log does not record.
type sess struct {
	id    string
	peer  peer
	log   *session.Log
	tools *tool.Session
	agent *agent.Agent
	diag  func(msg string, args ...any)

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc

	mu      sync.Mutex // guards what follows; held while sending what the bridge derives
	cond    *sync.Cond
	br      *bridge
	seen    int  // non-progress records the bridge has handled
	subDone bool // the subscriber returned
	turn    context.CancelFunc
	turnEnd chan struct{} // closed when the running turn ends
	closed  bool
	refresh map[string]*time.Timer // pending fallback refreshes, by call
	lastRef map[string]time.Time

	subWG sync.WaitGroup
}

// peer is the client side of the connection, as a session uses it.
type peer interface {
	SessionUpdate(ctx context.Context, n sdk.SessionNotification) error
	RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
}

func newSess(id string, p peer, log *session.Log, tools *tool.Session, br *bridge, diag func(string, ...any)) *sess {
	s := &sess{id: id, peer: p, log: log, tools: tools, br: br, diag: diag,
		refresh: map[string]*time.Timer{}, lastRef: map[string]time.Time{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.cond = sync.NewCond(&s.mu)
	return s
}

// send writes one update; a client that went away is not an error of the session.
// The caller holds s.mu, so updates leave in the order the bridge made them.
func (s *sess) send(u sdk.SessionUpdate) {
	err := s.peer.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
	if err != nil {
		s.diag("session update not sent", "session", s.id, "err", err)
	}
}

// replay sends the records of a loaded log, then fails the calls the log left
// unfinished (dsh stopped while they ran), so no card stays pending forever.
func (s *sess) replay(recs []session.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var calls []string
	for _, r := range session.Fold(recs) {
		for _, u := range s.br.updates(r, true) {
			s.send(u)
		}
		if r.Type == session.TypeToolCall {
			calls = append(calls, r.CallID)
		}
	}
	for _, id := range calls {
		if u, ok := s.br.abandon(id); ok {
			s.send(u)
		}
	}
}

// subscribe starts the bridge on the log's live records; the first skip records
// were replayed already.
func (s *sess) subscribe(skip int) {
	s.subWG.Go(func() {
		n := 0
		// The log's Close ends the subscription once every record is delivered.
		err := s.log.Subscribe(context.Background(), func(r session.Record) error {
			if n < skip {
				n++
				s.mu.Lock()
				s.count(r)
				s.mu.Unlock()
				return nil
			}
			s.handle(r)
			return nil
		})
		if err != nil {
			s.diag("session subscription ended", "session", s.id, "err", err)
		}
		s.mu.Lock()
		s.subDone = true
		s.cond.Broadcast()
		s.mu.Unlock()
	})
}

// handle sends what a live record shows.
func (s *sess) handle(r session.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.br.updates(r, false) {
		s.send(u)
	}
	switch r.Type {
	case session.TypeProgress:
		s.scheduleRefresh(r.CallID)
	case session.TypeToolResult:
		if t, ok := s.refresh[r.CallID]; ok {
			t.Stop()
			delete(s.refresh, r.CallID)
		}
		delete(s.lastRef, r.CallID)
	case session.TypeHeader, session.TypeUser, session.TypeToolCall, session.TypeAssistant, session.TypeThinking,
		session.TypePlan, session.TypeTurnEnd:
	}
	s.count(r)
}

// count notes a handled record for sync; progress records are not counted
// because the log does not keep all of them.
func (s *sess) count(r session.Record) {
	if r.Type != session.TypeProgress {
		s.seen++
		s.cond.Broadcast()
	}
}

// sync waits until the bridge has sent what every record appended so far shows.
// Records other than progress are delivered exactly when they are persisted, so
// the persisted ones are the target.
func (s *sess) sync() {
	target := 0
	for _, r := range s.log.Records() {
		if r.Type != session.TypeProgress {
			target++
		}
	}
	s.mu.Lock()
	for s.seen < target && !s.subDone {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// scheduleRefresh refreshes a running command's console block at most once per
// refreshInterval (only clients without terminal meta need it).
func (s *sess) scheduleRefresh(id string) {
	if s.br.termMeta {
		return
	}
	if _, waiting := s.refresh[id]; waiting {
		return
	}
	wait := refreshInterval - time.Since(s.lastRef[id])
	if wait <= 0 {
		s.refreshNow(id)
		return
	}
	s.refresh[id] = time.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.refresh, id)
		s.refreshNow(id)
	})
}

func (s *sess) refreshNow(id string) {
	if u, ok := s.br.refresh(id); ok {
		s.send(u)
		s.lastRef[id] = time.Now()
	}
}

// onDelta streams the model's text as it is written.
func (s *sess) onDelta(d provider.Delta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.br.delta(d); ok {
		s.send(u)
	}
}

// started marks a call as running. The agent logs a call before it runs it, so
// once the bridge has caught up with the log the call is there; catching up first
// also keeps the update after those of the calls before it.
func (s *sess) started(callID string) {
	s.sync()
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.br.start(callID); ok {
		s.send(u)
	}
}

// The permission options every request offers.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject_once"
)

var permissionOptions = []sdk.PermissionOption{
	{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: optAllowAlways, Name: "Always allow", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: optReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
}

// permit asks the client about a call, showing its card.
func (s *sess) permit(ctx context.Context, req agent.PermissionRequest) (agent.Decision, error) {
	s.sync() // the request follows the call's card and every update before it
	s.mu.Lock()
	call := s.br.permissionCall(req.CallID, req.Args, req.Card)
	s.mu.Unlock()
	// The request does not get the turn's context: cancelling it would make the
	// SDK send $/cancel_request, which is not ACP. After session/cancel the client
	// answers "cancelled" itself; the turn does not wait for that.
	type answer struct {
		resp sdk.RequestPermissionResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := s.peer.RequestPermission(context.Background(), sdk.RequestPermissionRequest{
			SessionId: sdk.SessionId(s.id), ToolCall: call, Options: permissionOptions})
		answered <- answer{resp, err}
	}()
	var resp sdk.RequestPermissionResponse
	select {
	case a := <-answered:
		if a.err != nil {
			return agent.Reject, a.err
		}
		resp = a.resp
	case <-ctx.Done():
		return agent.Reject, ctx.Err()
	}
	if resp.Outcome.Selected == nil { // the client cancelled the request
		return agent.Reject, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowOnce:
		return agent.AllowOnce, nil
	case optAllowAlways:
		return agent.AllowAlways, nil
	case optReject:
		return agent.Reject, nil
	}
	return agent.Reject, errors.New("the client chose an option that was not offered: " + string(resp.Outcome.Selected.OptionId))
}

// errBusy is returned for a prompt while another one of the session runs.
var errBusy = errors.New("busy")

// beginTurn claims the session for one prompt and returns the turn's context.
func (s *sess) beginTurn() (context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, errClosed
	case s.turn != nil:
		return nil, errBusy
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.turn, s.turnEnd = cancel, make(chan struct{})
	return ctx, nil
}

func (s *sess) endTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turn()
	s.turn = nil
	close(s.turnEnd)
}

// cancelTurn cancels the running turn, if any: the model stops and running
// commands are killed; the prompt then answers "cancelled".
func (s *sess) cancelTurn() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn != nil {
		s.turn()
	}
}

var errClosed = errors.New("the session is closed")

// close cancels the turn, waits for it to end, kills the session's commands and
// jobs, and closes the log once the bridge has sent every record.
func (s *sess) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	end := s.turnEnd
	if s.turn != nil {
		s.turn()
	} else {
		end = nil
	}
	s.mu.Unlock()
	if end != nil {
		select {
		case <-end:
		case <-time.After(closeWait):
			s.diag("turn did not end in time", "session", s.id)
		}
	}
	err := errors.Join(s.tools.Close(), s.log.Close())
	// The bridge sends what is left; a client that stopped reading cannot hold
	// the session open.
	sent := make(chan struct{})
	go func() {
		s.subWG.Wait()
		close(sent)
	}()
	select {
	case <-sent:
	case <-time.After(time.Second):
		s.diag("the last updates were not sent", "session", s.id)
	}
	s.cancel()
	s.mu.Lock()
	for _, t := range s.refresh {
		t.Stop()
	}
	s.mu.Unlock()
	return err
}

// syncedProvider makes the bridge catch up before each model request, so text
// streamed from the model never overtakes the records before it.
type syncedProvider struct {
	s   *sess
	get func() (provider.Provider, error)
}

func (p syncedProvider) Name() string {
	if inner, err := p.get(); err == nil {
		return inner.Name()
	}
	return "(none)"
}

func (p syncedProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	inner, err := p.get()
	if err != nil {
		return nil, err
	}
	p.s.sync()
	p.s.mu.Lock()
	p.s.br.forgetStreamed()
	p.s.mu.Unlock()
	return inner.Stream(ctx, req, onDelta)
}
