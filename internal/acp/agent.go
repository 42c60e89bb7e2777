// Package acp is dsh's Agent Client Protocol agent: editors such as Zed drive dsh
// sessions over stdio. It translates and dispatches; the conversation is the
// agent package's, the cards are the tools' (through package view), and each
// session's log is the only stream the client's view is derived from.
package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Options configure the agent.
type Options struct {
	SessionDir   string     // where session logs live
	Mode         agent.Mode // the permission mode sessions start in
	Model        string
	AllowOutside bool     // let tools touch paths outside the session's cwd
	KeepEnv      []string // secret-looking variables commands may still see
	// Provider returns the model provider. It is called when a model is first
	// needed, so that a missing key shows on the prompt, not at startup.
	Provider func() (provider.Provider, error)
	Version  string
	Logger   *slog.Logger // diagnostics; nil discards them
	Now      func() time.Time
}

// Agent implements the ACP agent side for any number of sessions.
type Agent struct {
	o Options

	provOnce sync.Once
	prov     provider.Provider
	provErr  error

	mu       sync.Mutex
	peer     peer
	termMeta bool
	sessions map[string]*sess
	closed   bool // the client is gone: sessions opened late are closed at once
}

var (
	_ sdk.Agent       = (*Agent)(nil)
	_ sdk.AgentLoader = (*Agent)(nil)
)

// New returns an agent; connect it with [Serve].
func New(o Options) *Agent {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = agent.ModeDefault
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{o: o, sessions: map[string]*sess{}}
}

func (a *Agent) setPeer(p peer) {
	a.mu.Lock()
	a.peer = p
	a.mu.Unlock()
}

func (a *Agent) provider() (provider.Provider, error) {
	a.provOnce.Do(func() {
		if a.o.Provider == nil {
			a.provErr = errors.New("no model provider is configured")
			return
		}
		a.prov, a.provErr = a.o.Provider()
	})
	return a.prov, a.provErr
}

// Initialize answers with what dsh supports: loading sessions, embedded context
// in prompts (no images or audio: the agent takes text), closing sessions, and
// no authentication (providers read their keys from the environment).
func (a *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	on, _ := p.ClientCapabilities.Meta["terminal_output"].(bool)
	a.mu.Lock()
	a.termMeta = on
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
		},
		AgentInfo:   &sdk.Implementation{Name: "dsh", Title: sdk.Ptr("dsh"), Version: a.o.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// NewSession starts a session whose workspace is the client's cwd.
func (a *Agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	h, err := host.Create(a.hostOptions(p.Cwd))
	if err != nil {
		return sdk.NewSessionResponse{}, openError(err)
	}
	s := a.newSess(h.ID(), h.Root(), h)
	s.attach(h)
	a.add(s)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(h.ID()), Modes: modeState(h.Mode(), h.AutoAvailable())}, nil
}

// LoadSession replays a session's log as updates — the same cards it showed
// live — while the host folds it into the session's state, in one pass over the
// file; the conversation goes on in the same log.
func (a *Agent) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	id := string(p.SessionId)
	path, err := a.logPath(id)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	a.mu.Lock()
	old := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if old != nil { // loaded again: its log must be let go before it is reopened
		if err := old.close(); err != nil {
			a.o.Logger.Warn("closing the session before reloading it", "session", id, "err", err)
		}
	}
	var s *sess
	h, err := host.Load(a.hostOptions(p.Cwd), path, func(h *host.Session, r session.Record) error {
		if s == nil {
			cwd := r.Cwd // the history's paths are relative to where it ran
			if cwd == "" {
				cwd = p.Cwd
			}
			s = a.newSess(id, cwd, h)
			s.br.replaying = true
		}
		return s.replayRecord(r)
	})
	if err != nil {
		return sdk.LoadSessionResponse{}, openError(err)
	}
	s.endReplay()
	s.br.replaying = false
	s.br.cwd = h.Root() // calls from now on run in the cwd the client gave
	s.attach(h)
	a.add(s)
	return sdk.LoadSessionResponse{Modes: modeState(h.Mode(), h.AutoAvailable())}, nil
}

func openError(err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return err
	}
	return sdk.NewInternalError(map[string]any{"error": err.Error()})
}

// logPath finds the log of a session id; only exact ids name a session here.
func (a *Agent) logPath(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\.`) {
		return "", unknownSession(id)
	}
	path, err := session.Resolve(a.o.SessionDir, id)
	if err != nil || filepath.Base(path) != id+".jsonl" {
		return "", unknownSession(id)
	}
	return path, nil
}

func checkCwd(cwd string) error {
	if !filepath.IsAbs(cwd) {
		return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd must be an absolute path, got %q", cwd)})
	}
	if _, err := workspace.New(cwd, false); err != nil {
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return nil
}

// hostOptions are the options of a session in cwd.
func (a *Agent) hostOptions(cwd string) host.Options {
	return host.Options{
		SessionDir:   a.o.SessionDir,
		Root:         cwd,
		AllowOutside: a.o.AllowOutside,
		KeepEnv:      a.o.KeepEnv,
		Mode:         a.o.Mode,
		Model:        a.o.Model,
		Provider:     a.provider,
		Ask:          true,
		Now:          a.o.Now,
		Warn:         func(msg string) { a.o.Logger.Warn(msg) },
	}
}

// newSess makes the ACP side of a session: the bridge that shows it.
func (a *Agent) newSess(id, cwd string, h *host.Session) *sess {
	a.mu.Lock()
	p, termMeta := a.peer, a.termMeta
	a.mu.Unlock()
	pres := view.NewPresenter(h.Registry())
	s := newSess(id, p, newBridge(cwd, termMeta, pres), a.diag)
	pres.OnError = func(err error) { a.o.Logger.Error("presenter failed", "session", id, "err", err) }
	return s
}

func (a *Agent) diag(msg string, args ...any) { a.o.Logger.Debug(msg, args...) }

func (a *Agent) add(s *sess) {
	a.mu.Lock()
	closed := a.closed
	if !closed {
		a.sessions[s.id] = s
	}
	a.mu.Unlock()
	if closed {
		_ = s.close()
	}
}

func (a *Agent) session(id sdk.SessionId) (*sess, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[string(id)]
	if !ok {
		return nil, unknownSession(string(id))
	}
	return s, nil
}

// unknownSession is the error for a session id this agent does not have.
func unknownSession(id string) error {
	return &sdk.RequestError{Code: -32002, Message: fmt.Sprintf("Unknown session %q", id),
		Data: map[string]any{"sessionId": id}}
}

// Prompt runs one turn. It always ends with a stop reason — "cancelled" after
// session/cancel — unless the model or the log fails, which is an error.
func (a *Agent) Prompt(_ context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	// The turn does not use the request's context: the SDK cancels it when the
	// same session gets another prompt, which is refused here instead.
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if _, err := a.provider(); err != nil { // say what to configure before logging a prompt that cannot run
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
	}
	stop, err := s.h.Prompt(context.Background(), text)
	switch {
	case errors.Is(err, host.ErrBusy):
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32600,
			Message: "A prompt is already running in this session; wait for its response or send session/cancel",
			Data:    map[string]any{"sessionId": s.id}}
	case errors.Is(err, host.ErrClosed):
		return sdk.PromptResponse{}, unknownSession(s.id)
	}
	// Every update of the turn goes out before its answer.
	s.flush()
	if err != nil {
		// The model or the log failed; the message says which and why.
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
	}
	reason, err := stopReason(stop)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: reason}, nil
}

func stopReason(r agent.StopReason) (sdk.StopReason, error) {
	switch r {
	case agent.StopEndTurn:
		return sdk.StopReasonEndTurn, nil
	case agent.StopMaxTokens:
		return sdk.StopReasonMaxTokens, nil
	case agent.StopMaxTurns:
		return sdk.StopReasonMaxTurnRequests, nil
	case agent.StopRefusal:
		return sdk.StopReasonRefusal, nil
	case agent.StopCancelled:
		return sdk.StopReasonCancelled, nil
	case agent.StopError:
	}
	return "", sdk.NewInternalError(map[string]any{"error": "the turn failed"})
}

// Cancel cancels a session's running turn; an idle or unknown session has none.
func (a *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	if s, err := a.session(p.SessionId); err == nil {
		s.h.Cancel()
	}
	return nil
}

// SetSessionMode changes the permission mode, from the next call on.
func (a *Agent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, err := agent.ParseMode(string(p.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := s.h.SetMode(m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.SetSessionModeResponse{}, nil
}

// CloseSession ends a session: its turn is cancelled, its commands and jobs are
// killed and its log is closed.
func (a *Agent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.CloseSessionResponse{}, err
	}
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
	if err := s.close(); err != nil {
		return sdk.CloseSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.CloseSessionResponse{}, nil
}

// Close closes every session, as when the client goes away.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closed = true
	all := make([]*sess, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	clear(a.sessions)
	a.mu.Unlock()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Authenticate is not needed: dsh advertises no authentication methods.
func (a *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodAuthenticate)
}

// ListSessions is not advertised.
func (a *Agent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not advertised: session/load does more.
func (a *Agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not advertised: the modes are the only setting.
func (a *Agent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// modeState offers the permission modes as session modes; auto only where the
// session's commands run in the sandbox.
func modeState(current agent.Mode, auto bool) *sdk.SessionModeState {
	modes := make([]sdk.SessionMode, 0, len(agent.Modes))
	for _, m := range agent.Modes {
		if m == agent.ModeAuto && !auto {
			continue
		}
		name, desc := modeText(m)
		modes = append(modes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: name, Description: sdk.Ptr(desc)})
	}
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(current)}
}

func modeText(m agent.Mode) (name, desc string) {
	switch m {
	case agent.ModeDefault:
		return "Default", "Ask before changing files or running commands"
	case agent.ModeAcceptEdits:
		return "Accept edits", "Change files without asking; ask before running commands"
	case agent.ModeAuto:
		return "Auto (sandboxed)", "Run commands and change files without asking: commands run in the sandbox"
	case agent.ModeBypass:
		return "Bypass permissions", "Never ask"
	case agent.ModeReadOnly:
		return "Read only", "Refuse every call that changes files or runs commands"
	}
	return string(m), string(m)
}
