package acp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
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

	a    *Agent
	cmds []host.Command // the slash commands it offers
	// listed is the host's MCPListed the commands were taken at; told says
	// the client has them (announce), so a change is sent as it comes.
	listed uint64
	told   bool
	held   []sdk.SessionUpdate // what came before told, sent then
	notes  *notes              // about its MCP servers
	// ready is closed once the client has been told what a new session offers
	// (after it got the session's id); a prompt waits for it.
	ready chan struct{}

	mu      sync.Mutex // serialises the bridge and the sends it derives
	br      *bridge
	refresh map[string]*time.Timer // pending fallback refreshes, by call
	lastRef map[string]time.Time
	closed  bool

	titled    bool           // the session has a title (its first prompt)
	turnUsage *session.Usage // the last turn's, for its prompt response
	lastUsage usageKey       // what the last usage_update was sent for
	// settle: a turn's end or a compaction was published; the host's next
	// status, which follows its fold, is the size they leave.
	settle bool
	said   int // messages of dsh's own (notes), which no record holds, to number them
}

// usageKey is what a usage_update is sent for: a model call's tokens (the
// context's size then is the provider's count), another window, or the size a
// turn's end or a compaction leaves. The estimate moving in between sends none.
type usageKey struct{ tokens, window, used int64 }

// peer is the client side of the connection, as a session uses it.
type peer interface {
	SessionUpdate(ctx context.Context, n sdk.SessionNotification) error
	// Replayed sends an update of a replay; it may wait for those that follow
	// it until Flush.
	Replayed(n sdk.SessionNotification) error
	Flush() error
	RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
	// Elicit asks through the client's form (elicitation/create).
	Elicit(ctx context.Context, e rpcfix.Elicitation) (rpcfix.Elicited, error)
}

func newSess(id string, p peer, br *bridge, diag func(string, ...any)) *sess {
	return &sess{id: id, peer: p, br: br, diag: diag, ready: make(chan struct{}),
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
	note := sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u}
	var err error
	if s.br.replaying {
		err = s.peer.Replayed(note)
	} else {
		err = s.peer.SessionUpdate(context.Background(), note)
	}
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
	switch r.Type {
	case session.TypeUser:
		s.titleFrom(r)
	case session.TypeHeader, session.TypeAssistant, session.TypeThinking, session.TypeToolCall, session.TypeProgress,
		session.TypeToolResult, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeDamaged,
		session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeTurnEnd, session.TypeCheckpoint, session.TypeRestore, session.TypeHook,
		session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
	return nil
}

// titleFrom sends the session's title, taken from its first prompt. The
// caller holds s.mu.
func (s *sess) titleFrom(r session.Record) {
	if s.titled || strings.TrimSpace(r.Text) == "" {
		return
	}
	s.titled = true
	s.send(sdk.SessionUpdate{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{
		Title: sdk.Ptr(title(r.Text)), UpdatedAt: sdk.Ptr(r.Time.UTC().Format(time.RFC3339Nano))}})
}

// say sends the user a message that is not the model's: the answer to a
// command, a note about an MCP server.
func (s *sess) say(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.said++
	s.send(withID(sdk.UpdateAgentMessageText(text), fmt.Sprintf("%s-n%d", s.id, s.said)))
}

// announce tells the client what the session offers — its commands, its
// usage so far — and what went wrong with its MCP servers; from now on such
// news is sent as it happens.
func (s *sess) announce() {
	s.mu.Lock()
	s.send(commandsUpdate(s.cmds))
	s.told = true
	for _, u := range s.held {
		s.send(u)
	}
	s.held = nil
	if st := s.h.Status(); st.InputTokens+st.OutputTokens > 0 { // a loaded session's, folded from its log
		s.sendUsage(st, true)
	}
	s.mu.Unlock()
	for _, n := range s.notes.attach(func(msg string) { s.say(userNote(msg)) }) {
		s.say(userNote(n))
	}
}

// sendUsage sends the host's status as the context's fill and the cost so
// far, once per model call and window. The caller holds s.mu.
func (s *sess) sendUsage(st host.Status, settled bool) {
	u := &sdk.SessionUsageUpdate{Used: int(st.ContextTokens), Size: int(st.Window)}
	if !st.Unpriced && st.InputTokens+st.OutputTokens > 0 {
		u.Cost = &sdk.Cost{Amount: st.Cost, Currency: "USD"}
	}
	key := usageKey{st.InputTokens + st.OutputTokens, st.Window, st.ContextTokens}
	if key.tokens == s.lastUsage.tokens && key.window == s.lastUsage.window && (!settled || key.used == s.lastUsage.used) {
		return
	}
	s.lastUsage = key
	s.send(sdk.SessionUpdate{UsageUpdate: u})
}

// settledUsage sends the context's size a turn's end or a compaction leaves.
// Their record is published before the agent folds it, so the host's status
// may not hold them yet: the next status event is sent as settled too. The
// caller holds s.mu.
func (s *sess) settledUsage() {
	s.settle = true
	if st := s.h.Status(); st.InputTokens+st.OutputTokens > 0 {
		s.sendUsage(st, true)
	}
}

// endReplay fails the calls the log left unfinished (dsh stopped while they
// ran), so no card stays pending forever.
func (s *sess) endReplay() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.br.abandonAll() {
		s.send(u)
	}
	if err := s.peer.Flush(); err != nil {
		s.diag("session updates not sent", "session", s.id, "err", err)
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
	case host.KindQuestion:
		s.ask(e.Question)
	case host.KindStatus:
		s.mu.Lock()
		if e.Status.MCPListed != s.listed { // a server changed its prompts: the commands follow
			s.listed = e.Status.MCPListed
			if cmds := s.h.CommandsFor(host.Editor); !sameOffer(cmds, s.cmds) {
				s.cmds = cmds
				if s.told {
					s.send(commandsUpdate(s.cmds))
				}
			}
		}
		if e.Status.InputTokens+e.Status.OutputTokens > 0 { // nothing counted yet tells nothing
			s.sendUsage(e.Status, s.settle)
			s.settle = false
		}
		s.mu.Unlock()
	case host.KindChild:
		s.child(e.Child)
	case host.KindNotice:
		s.say(userNote(e.Text))
	case host.KindUsage:
	}
}

// child shows a subagent's event nested under its task call.
func (s *sess) child(c *host.Child) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.Event.Kind {
	case host.KindRecord:
		for _, u := range s.br.childUpdates(c.Call, c.Session, c.Event.Record, false) {
			s.send(u)
		}
	case host.KindCallStarted:
		if u, ok := s.br.childStart(c.Call, c.Session, c.Event.CallID); ok {
			s.send(u)
		}
	case host.KindDelta, host.KindModelRequest, host.KindPermission, host.KindUsage, host.KindStatus, host.KindQuestion, host.KindChild,
		host.KindNotice:
	}
}

func (s *sess) record(r session.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.br.updates(r, false) {
		if !s.told { // the client does not know the session yet (a sign-in's link)
			s.held = append(s.held, u)
			continue
		}
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
		// The record is published before the agent folds it: the mode it shows
		// is the record's, not what the host may still say.
		opts := s.a.configOptions(s)
		for _, o := range opts {
			if o.Select != nil && o.Select.Id == optMode {
				o.Select.CurrentValue = sdk.SessionConfigValueId(r.Mode)
			}
		}
		s.send(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: opts}})
	case session.TypeModel:
		// As for the mode: the record's model, not what the host may still say.
		s.send(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{
			ConfigOptions: s.a.configOptionsFor(s, cmp.Or(r.Model, s.a.o.Model), r.Thinking)}})
	case session.TypeUser:
		s.titleFrom(r)
	case session.TypeTurnEnd:
		s.turnUsage = r.Usage
		s.settledUsage()
	case session.TypeCompaction:
		s.settledUsage()
	case session.TypeHeader, session.TypeToolCall, session.TypeAssistant, session.TypeThinking,
		session.TypePlan, session.TypeAllow, session.TypeDamaged, session.TypeInstructions, session.TypeCheckpoint, session.TypeRestore, session.TypeHook,
		session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
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

func permissionOptions(req host.PermissionRequest) []sdk.PermissionOption {
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
	if p.Parent != "" {
		call = s.br.childPermission(p)
	}
	s.mu.Unlock()
	// The answer is waited for aside: the stream goes on meanwhile (a prompt
	// sent now is told it is queued).
	aside(p.Done(), func(ctx context.Context) {
		resp, err := s.peer.RequestPermission(ctx, sdk.RequestPermissionRequest{
			SessionId: sdk.SessionId(s.id), ToolCall: call, Options: permissionOptions(req)})
		if ctx.Err() != nil {
			return // no longer asked
		}
		d, err := decision(resp, err)
		if err != nil {
			s.diag("permission request failed", "session", s.id, "err", err)
		}
		p.Answer(d)
	})
}

// aside runs ask, a request to the client, on a goroutine of its own with a
// context that ends once done is closed (the question no longer waits: its
// turn was cancelled): the SDK, or rpcfix, then sends $/cancel_request naming
// the request. Nothing waits for the client's answer to that.
func aside(done <-chan struct{}, ask func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer cancel()
		ask(ctx)
	}()
}

func decision(resp sdk.RequestPermissionResponse, err error) (host.Decision, error) {
	if err != nil {
		return host.Reject, err
	}
	if resp.Outcome.Selected == nil { // the client cancelled the request
		return host.Reject, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowOnce:
		return host.AllowOnce, nil
	case optAllowAlways:
		return host.AllowAlways, nil
	case optReject:
		return host.Reject, nil
	}
	return host.Reject, errors.New("the client chose an option that was not offered: " + string(resp.Outcome.Selected.OptionId))
}

// A question's options are its choices (answer:ID) and, where the user may
// answer in their own words (which a permission request cannot take), one
// that leaves the answer to their next message.
const (
	optAnswer   = "answer:"
	optNone     = "none"
	optNoneName = "Answer in a message instead"
)

func questionOptions(q tool.Question) []sdk.PermissionOption {
	opts := make([]sdk.PermissionOption, 0, len(q.Choices)+1)
	for _, c := range q.Choices {
		opts = append(opts, sdk.PermissionOption{OptionId: sdk.PermissionOptionId(optAnswer + c.ID), Name: c.Label, Kind: sdk.PermissionOptionKindAllowOnce})
	}
	if q.FreeText {
		opts = append(opts, sdk.PermissionOption{OptionId: optNone, Name: optNoneName, Kind: sdk.PermissionOptionKindRejectOnce})
	}
	return opts
}

// ask puts a tool's question (ask_user, the plan's hand-off, an MCP server's
// elicitation — the host's question) to the client: as a form where it takes
// elicitation, the call's card shown first; otherwise as a permission request
// on the call's card whose options are the answers.
func (s *sess) ask(q *host.Question) {
	req := q.Request
	form := s.a != nil && s.a.elicits()
	s.mu.Lock()
	call := s.br.permissionCall(req.CallID, nil, req.Card)
	if q.Parent != "" {
		call = s.br.childQuestion(q)
	}
	if form {
		s.send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: call.ToolCallId, Title: call.Title,
			Kind: call.Kind, Content: call.Content, Locations: call.Locations}})
	}
	s.mu.Unlock()
	if form {
		aside(q.Done(), func(ctx context.Context) {
			r, err := s.peer.Elicit(ctx, questionForm(s.id, string(call.ToolCallId), req.Question))
			if ctx.Err() != nil {
				return
			}
			ans, err := elicited(req.Question, r, err)
			if err != nil {
				s.diag("question failed", "session", s.id, "err", err)
			}
			q.Answer(ans)
		})
		return
	}
	aside(q.Done(), func(ctx context.Context) { // as permit's
		resp, err := s.peer.RequestPermission(ctx, sdk.RequestPermissionRequest{
			SessionId: sdk.SessionId(s.id), ToolCall: call, Options: questionOptions(req.Question)})
		if ctx.Err() != nil {
			return
		}
		ans, err := chosen(req.Question, resp, err)
		if err != nil {
			s.diag("question failed", "session", s.id, "err", err)
		}
		q.Answer(ans)
	})
}

// The form's fields: the choices, and the user's own words where the
// question takes them.
const (
	fieldAnswer = "answer"
	fieldOther  = "other"
)

// questionForm is a question as a form: one field whose values are the
// choices (their descriptions in the message, which a choice cannot carry)
// and, where the user may answer in their own words, a free one.
func questionForm(session, call string, q tool.Question) rpcfix.Elicitation {
	msg := q.Text
	opts := make([]rpcfix.Option, 0, len(q.Choices))
	for _, c := range q.Choices {
		opts = append(opts, rpcfix.Option{Const: c.ID, Title: c.Label})
		if c.Description != "" {
			msg += "\n- " + c.Label + ": " + c.Description
		}
	}
	props := map[string]rpcfix.Property{fieldAnswer: {Title: q.Text, OneOf: opts}}
	if q.FreeText {
		props[fieldOther] = rpcfix.Property{Title: "Or answer in your own words", Description: "Used instead of the choice when given."}
	}
	return rpcfix.Elicitation{SessionID: session, ToolCallID: call, Message: msg, Schema: rpcfix.FormSchema{Properties: props}}
}

// elicited is the answer a form's response stands for: the user's own words
// when they gave some, else their choice; none when they declined, cancelled,
// or the request failed.
func elicited(q tool.Question, r rpcfix.Elicited, err error) (card.Answer, error) {
	if err != nil || r.Action != rpcfix.ActionAccept {
		return card.Answer{}, err
	}
	if text, _ := r.Content[fieldOther].(string); strings.TrimSpace(text) != "" && q.FreeText {
		return card.Answer{Text: strings.TrimSpace(text)}, nil
	}
	id, _ := r.Content[fieldAnswer].(string)
	if id == "" {
		return card.Answer{}, nil
	}
	for _, c := range q.Choices {
		if c.ID == id {
			return card.Answer{ID: c.ID, Text: c.Label}, nil
		}
	}
	return card.Answer{}, errors.New("the client's form gave an answer that was not offered: " + id)
}

// chosen is the answer an option stands for; none when the client cancelled
// the request, failed, or chose the option that leaves it to a message.
func chosen(q tool.Question, resp sdk.RequestPermissionResponse, err error) (card.Answer, error) {
	if err != nil || resp.Outcome.Selected == nil {
		return card.Answer{}, err
	}
	id := string(resp.Outcome.Selected.OptionId)
	if id == optNone {
		return card.Answer{}, nil
	}
	for _, c := range q.Choices {
		if id == optAnswer+c.ID {
			return card.Answer{ID: c.ID, Text: c.Label}, nil
		}
	}
	return card.Answer{}, errors.New("the client chose an option that was not offered: " + id)
}

// announced tells the client what the session offers, starts what a new
// session's answer did not wait for (its control socket, which lets other
// clients join it, and its first checkpoint walk), then lets prompts run.
func (s *sess) announced() {
	s.announce()
	s.h.GoLive()
	close(s.ready)
}

// waitReady waits, bounded, until the client was told what the session offers.
func (s *sess) waitReady() {
	select {
	case <-s.ready:
	case <-time.After(flushWait):
	}
}

// takeTurnUsage is the last turn's usage for its prompt response.
func (s *sess) takeTurnUsage() *sdk.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.turnUsage
	s.turnUsage = nil
	if u == nil || u.InputTokens+u.OutputTokens == 0 { // a provider that counts nothing tells nothing
		return nil
	}
	return &sdk.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens), TotalTokens: int(u.InputTokens + u.OutputTokens)}
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
