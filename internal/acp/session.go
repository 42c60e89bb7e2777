package acp

import (
	"context"
	"errors"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// refreshInterval throttles the fallback console block of a running command.
const refreshInterval = 200 * time.Millisecond

// flushWait bounds how long a prompt's answer waits for its last updates to be
// written: a client that stopped reading cannot hold the answer forever.
const flushWait = 5 * time.Second

// sess is one ACP session: a host session with the bridge as a fold over its
// event stream. Everything the client sees comes from that stream, in its order.
type sess struct {
	id   string
	peer peer
	h    *host.Session
	sub  *host.Subscription
	diag func(msg string, args ...any)

	mu      sync.Mutex // serialises the bridge and the sends it derives
	br      *bridge
	refresh map[string]*time.Timer // pending fallback refreshes, by call
	lastRef map[string]time.Time
	closed  bool
}

// peer is the client side of the connection, as a session uses it.
type peer interface {
	SessionUpdate(ctx context.Context, n sdk.SessionNotification) error
	RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
}

func newSess(id string, p peer, br *bridge, diag func(string, ...any)) *sess {
	return &sess{id: id, peer: p, br: br, diag: diag,
		refresh: map[string]*time.Timer{}, lastRef: map[string]time.Time{}}
}

// attach starts the bridge on the host session's live stream.
func (s *sess) attach(h *host.Session) {
	s.h = h
	s.sub = h.Subscribe(s.handle)
}

// send writes one update; a client that went away is not an error of the session.
// The caller holds s.mu, so updates leave in the order the bridge made them.
func (s *sess) send(u sdk.SessionUpdate) {
	err := s.peer.SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
	if err != nil {
		s.diag("session update not sent", "session", s.id, "err", err)
	}
}

// replayRecord sends what a loaded log's record shows. Progress is folded away:
// the result shows the output.
func (s *sess) replayRecord(r session.Record) error {
	if r.Type == session.TypeProgress {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.br.updates(r, true) {
		s.send(u)
	}
	return nil
}

// endReplay fails the calls the log left unfinished (dsh stopped while they
// ran), so no card stays pending forever.
func (s *sess) endReplay() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.br.abandonAll() {
		s.send(u)
	}
}

// handle is the fold: one event of the live stream in, updates out.
func (s *sess) handle(e host.Event) {
	switch e.Kind {
	case host.KindRecord:
		s.record(e.Record)
	case host.KindDelta:
		s.mu.Lock()
		if u, ok := s.br.delta(e.Delta); ok {
			s.send(u)
		}
		s.mu.Unlock()
	case host.KindModelRequest:
		s.mu.Lock()
		s.br.forgetStreamed()
		s.mu.Unlock()
	case host.KindCallStarted:
		s.mu.Lock()
		if u, ok := s.br.start(e.CallID); ok {
			s.send(u)
		}
		s.mu.Unlock()
	case host.KindPermission:
		s.permit(e.Permission)
	case host.KindUsage:
	}
}

func (s *sess) record(r session.Record) {
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
	case session.TypeMode:
		s.send(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(r.Mode)}})
	case session.TypeHeader, session.TypeUser, session.TypeToolCall, session.TypeAssistant, session.TypeThinking,
		session.TypePlan, session.TypeTurnEnd, session.TypeAllow, session.TypeDamaged, session.TypeCompaction, session.TypeInstructions:
	}
}

// scheduleRefresh refreshes a running command's console block at most once per
// refreshInterval (only clients without terminal meta need it). The caller holds s.mu.
func (s *sess) scheduleRefresh(id string) {
	if s.br.termMeta || s.closed {
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
		if _, pending := s.refresh[id]; !pending {
			return // the result came first
		}
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

// The permission options; "always" names what it remembers.
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optReject      = "reject_once"
)

func permissionOptions(req agent.PermissionRequest) []sdk.PermissionOption {
	opts := []sdk.PermissionOption{{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce}}
	if ap := req.Approval; ap.Remember && len(ap.Keys) > 0 {
		opts = append(opts, sdk.PermissionOption{OptionId: optAllowAlways, Name: "Always allow " + ap.Label, Kind: sdk.PermissionOptionKindAllowAlways})
	}
	return append(opts, sdk.PermissionOption{OptionId: optReject, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce})
}

// permit asks the client about a call, showing its card. It runs in the stream's
// order, so the request follows the call's tool_call and every update before it.
func (s *sess) permit(p *host.Permission) {
	req := p.Request
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
			SessionId: sdk.SessionId(s.id), ToolCall: call, Options: permissionOptions(req)})
		answered <- answer{resp, err}
	}()
	select {
	case a := <-answered:
		d, err := decision(a.resp, a.err)
		if err != nil {
			s.diag("permission request failed", "session", s.id, "err", err)
		}
		p.Answer(d)
	case <-p.Done():
	}
}

func decision(resp sdk.RequestPermissionResponse, err error) (agent.Decision, error) {
	if err != nil {
		return agent.Reject, err
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

// flush waits until the bridge has sent what every event so far shows.
func (s *sess) flush() {
	if !s.sub.Flush(flushWait) {
		s.diag("updates not sent in time", "session", s.id)
	}
}

// close ends the host session (bounded) and stops the refresh timers. It does
// not wait for the lock a stuck send holds (a client that stopped reading).
func (s *sess) close() error {
	err := s.h.Close()
	stop := func() {
		s.closed = true
		for id, t := range s.refresh {
			t.Stop()
			delete(s.refresh, id)
		}
		s.mu.Unlock()
	}
	if s.mu.TryLock() {
		stop()
	} else {
		go func() { s.mu.Lock(); stop() }()
	}
	return err
}
