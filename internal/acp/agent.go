// Package acp is dsh's Agent Client Protocol agent: editors such as Zed drive dsh
// sessions over stdio. It translates and dispatches; the conversation is the
// agent package's, the cards are the tools' (through package view), and each
// session's log is the only stream the client's view is derived from.
package acp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// Options configure the agent.
type Options struct {
	SessionDir string // where session logs live
	// Setup resolves what a session in cwd opens with: the settings of its
	// project's file, the user's, the flags and the environment (nil: the
	// host's defaults alone).
	Setup func(cwd string) (host.Setup, error)
	// Model is the model sessions start with where their settings name none,
	// shown as the current one in the model picker.
	Model   string
	Version string
	Logger  *slog.Logger // diagnostics; nil discards them
	Now     func() time.Time
	// Getenv reads the environment for each session's custom commands; nil is
	// os.Getenv.
	Getenv func(string) string
}

// Agent implements the ACP agent side for any number of sessions.
type Agent struct {
	o Options

	waiting  *announcements // new sessions' announcements, once serving
	listPage int            // sessions per session/list page; 0 is listPage

	mu       sync.Mutex
	peer     peer
	termMeta bool
	fs       sdk.FileSystemCapabilities // what the client offers of its files
	form     bool                       // the client takes form elicitations
	sessions map[string]*sess
	closed   bool // the client is gone: sessions opened late are closed at once

	signedOut atomic.Bool // logout: prompts want authenticate first
	// prompts cancel the session/prompt requests being answered, by their
	// JSON-RPC id: $/cancel_request names one. early are those cancelled
	// before their handler began.
	prompts map[string]context.CancelFunc
	early   map[string]bool
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Setup == nil {
		dir := o.SessionDir
		o.Setup = func(cwd string) (host.Setup, error) {
			return host.Setup{Options: host.Options{SessionDir: dir, Root: cwd}}, nil
		}
	}
	return &Agent{o: o, sessions: map[string]*sess{}, prompts: map[string]context.CancelFunc{}, early: map[string]bool{}}
}

// elicits says questions go to the client as forms.
func (a *Agent) elicits() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.form
}

func (a *Agent) setPeer(p peer) {
	a.mu.Lock()
	a.peer = p
	a.mu.Unlock()
}

// Initialize answers with what dsh supports: loading, listing, resuming,
// closing and deleting sessions, logging out, embedded context and images in prompts (no audio), MCP
// servers over stdio, HTTP and SSE, and sign-in with an API key. A request of
// the usual shape is answered by initializeFast instead, the same answer
// (TestInitializeFastIsTheSDKs): a change here is a change there.
func (a *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	on, _ := p.ClientCapabilities.Meta["terminal_output"].(bool)
	a.mu.Lock()
	a.termMeta = on
	a.fs = p.ClientCapabilities.Fs
	a.form = p.ClientCapabilities.Elicitation != nil && p.ClientCapabilities.Elicitation.Form != nil
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			Auth:               sdk.AgentAuthCapabilities{Logout: &sdk.LogoutCapabilities{}},
			SessionCapabilities: sdk.SessionCapabilities{
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{},
				Close:                 &sdk.SessionCloseCapabilities{},
				Delete:                &sdk.SessionDeleteCapabilities{},
				Fork:                  &sdk.SessionForkCapabilities{},
				List:                  &sdk.SessionListCapabilities{},
				Resume:                &sdk.SessionResumeCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "dsh", Title: sdk.Ptr("dsh"), Version: a.o.Version},
		AuthMethods: authMethods(p.ClientCapabilities),
	}, nil
}

// NewSession starts a session whose workspace is the client's cwd.
// Its MCP servers (the client's and the configuration file's) are started
// first, so the model has their tools from the first prompt.
func (a *Agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := cmp.Or(checkCwd(p.Cwd), checkDirs(p.AdditionalDirectories)); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	st, err := a.setup(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	n := a.ignored(st)
	o := a.hostOptions(st, p.McpServers, p.AdditionalDirectories, n)
	o.LiveLater = true // once answered: see announced
	files := a.files()
	if files != nil {
		o.Files = files
	}
	h, err := host.Create(o)
	if err != nil {
		return sdk.NewSessionResponse{}, openError(err)
	}
	s := a.newSess(h.ID(), h.Root(), h)
	if files != nil {
		files.attach(s)
	}
	a.equip(s, h, n)
	s.attach(h)
	a.add(s)
	// The client can place updates only once it has the session's id.
	if a.waiting != nil {
		a.waiting.after(s.id, s.announced)
	} else {
		s.announced()
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(h.ID()), Modes: modeState(h),
		ConfigOptions: a.configOptions(s)}, nil
}

// setup is what a session in cwd opens with; a bad settings file is the
// client's error, with the file and line.
func (a *Agent) setup(cwd string) (host.Setup, error) {
	st, err := a.o.Setup(cwd)
	if err != nil {
		return host.Setup{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return st, nil
}

// ignored starts a session's notes with the project settings that were not
// applied: the user reads them in the thread when it opens.
func (a *Agent) ignored(st host.Setup) *notes {
	n := &notes{}
	for _, msg := range st.Ignored {
		a.o.Logger.Warn(msg)
		n.add(msg)
	}
	return n
}

// equip gives a session its commands (the host's table, as an editor offers
// it) and notes.
func (a *Agent) equip(s *sess, h *host.Session, n *notes) {
	s.notes = n
	s.cmds, s.listed = h.CommandsFor(host.Editor), h.Status().MCPListed
}

// LoadSession replays a session's log as updates — the same cards it showed
// live — while the host folds it into the session's state, in one pass over the
// file; the conversation goes on in the same log.
func (a *Agent) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	s, err := a.reopen(string(p.SessionId), p.Cwd, p.McpServers, p.AdditionalDirectories, true)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: modeState(s.h), ConfigOptions: a.configOptions(s)}, nil
}

// ResumeSession reattaches a session without replaying it: the client still
// shows its history.
func (a *Agent) ResumeSession(_ context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	s, err := a.reopen(string(p.SessionId), p.Cwd, p.McpServers, p.AdditionalDirectories, false)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: modeState(s.h), ConfigOptions: a.configOptions(s)}, nil
}

// reopen opens a logged session in cwd, replaying its log to the client or not.
// A session already open here is closed first: its log must be let go.
func (a *Agent) reopen(id, cwd string, servers []sdk.McpServer, dirs []string, replay bool) (*sess, error) {
	path, err := a.logPath(id)
	if err != nil {
		return nil, err
	}
	if err := cmp.Or(checkCwd(cwd), checkDirs(dirs)); err != nil {
		return nil, err
	}
	st, err := a.setup(cwd)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	old := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if old != nil {
		if err := old.close(); err != nil {
			a.o.Logger.Warn("closing the session before reopening it", "session", id, "err", err)
		}
	}
	n := a.ignored(st)
	var s *sess
	var each func(*host.Session, session.Record) error
	if replay {
		each = func(h *host.Session, r session.Record) error {
			if s == nil {
				hcwd := r.Cwd // the history's paths are relative to where it ran
				if hcwd == "" {
					hcwd = cwd
				}
				s = a.newSess(id, hcwd, h)
				s.br.replaying = true
				s.br.logPath = path
			}
			return s.replayRecord(r)
		}
	}
	o := a.hostOptions(st, servers, dirs, n)
	files := a.files()
	if files != nil {
		o.Files = files
	}
	h, err := host.Load(o, path, each)
	if err != nil {
		return nil, openError(err)
	}
	if s == nil {
		s = a.newSess(id, h.Root(), h)
	}
	if files != nil {
		files.attach(s)
	}
	s.endReplay()
	s.br.replaying = false
	s.br.cwd = h.Root() // calls from now on run in the cwd the client gave
	a.equip(s, h, n)
	s.attach(h)
	a.add(s)
	s.announced() // the client named the session: it can take updates now
	return s, nil
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
	if err := host.CheckRoot(cwd); err != nil {
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return nil
}

// checkDirs refuses additional directories that are not absolute paths of
// directories.
func checkDirs(dirs []string) error {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("additionalDirectories must be absolute paths, got %q", d)})
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("additional directory %s is not a directory", d)})
		}
	}
	return nil
}

// hostOptions are the options of a session with settings st: its MCP
// servers are the configuration's with the client's laid over them, and what
// goes wrong with them is told in the thread.
func (a *Agent) hostOptions(st host.Setup, client []sdk.McpServer, dirs []string, n *notes) host.Options {
	o := st.Options
	o.Roots = dirs
	if len(dirs) > 0 {
		n.add("dsh may also read and change files in: " + strings.Join(dirs, ", "))
	}
	o.MCP = mcpFor(o.MCP, client, n)
	o.MCPNotice = n.add
	o.MCPLog = a.o.Logger
	o.Ask, o.Now, o.Client = true, a.o.Now, clientName
	o.Warn = func(msg string) { a.o.Logger.Warn(msg); n.add(msg) }
	if o.Model == "" {
		o.Model = a.o.Model
	}
	return o
}

// newSess makes the ACP side of a session: the bridge that shows it.
func (a *Agent) newSess(id, cwd string, h *host.Session) *sess {
	a.mu.Lock()
	p, termMeta := a.peer, a.termMeta
	a.mu.Unlock()
	pres := view.NewPresenter(h.Registry())
	br := newBridge(cwd, termMeta, pres)
	br.session = id
	s := newSess(id, p, br, a.diag)
	s.a = a
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
// session/cancel, or after $/cancel_request named it (a prompt still queued
// behind the running turn is then dropped alone) — unless the model or the log
// fails, which is an error. A prompt sent while a turn runs waits for it: the
// host queues it.
func (a *Agent) Prompt(_ context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	// The turn does not use the request's context: the SDK cancels it when the
	// same session gets another prompt, which the host queues instead.
	ctx, done := a.cancellable(p.Meta)
	defer done()
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if a.signedOut.Load() {
		return sdk.PromptResponse{}, authRequired("Signed out: sign in again to prompt. " + loginHelp)
	}
	text, images, err := promptText(p.Prompt, func() map[string]string { return s.h.ResourceMentions(context.Background()) })
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.waitReady()
	if _, err := s.h.Provider(); err != nil && !s.h.Answers(text, host.Editor) { // say what to configure before logging a prompt that cannot run
		return sdk.PromptResponse{}, promptError(err)
	}
	steer, _ := p.Meta[steerMeta].(bool)
	ans, err := s.h.Submit(ctx, host.Input{Text: text, Content: images, Where: host.Editor, Steer: steer})
	stop := ans.Stop
	if !ans.Turn && err == nil {
		stop = host.StopEndTurn
	}
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() != nil: // $/cancel_request dropped it from the queue
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case errors.Is(err, host.ErrClosed):
		return sdk.PromptResponse{}, unknownSession(s.id)
	case errors.Is(err, host.ErrUnknownCommand):
		s.say(strings.ToUpper(err.Error()[:1]) + err.Error()[1:] + ".")
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	// Every update of the turn goes out before its answer.
	s.flush()
	if err != nil {
		// The model or the log failed; the message says which and why.
		return sdk.PromptResponse{}, promptError(err)
	}
	reason, err := stopReason(stop)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: reason, Usage: s.takeTurnUsage()}, nil
}

// steerMeta, true in a prompt's _meta, asks that a prompt sent while a turn
// runs reach the model at the turn's next step rather than wait for its end;
// its answer is then the turn's.
const steerMeta = "dsh.dev/steer"

// cancellable is the context of a prompt request whose params' meta holds
// its id (rpcfix adds it): $/cancel_request naming it ends the context.
func (a *Agent) cancellable(meta map[string]any) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	id, _ := meta[rpcfix.RequestIDMeta].(string)
	if id == "" {
		return ctx, cancel
	}
	a.mu.Lock()
	a.prompts[id] = cancel
	if a.early[id] {
		delete(a.early, id)
		cancel()
	}
	a.mu.Unlock()
	return ctx, func() {
		a.mu.Lock()
		delete(a.prompts, id)
		a.mu.Unlock()
		cancel()
	}
}

// cancelRequest cancels the prompt request id, if it is being answered.
func (a *Agent) cancelRequest(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cancel := a.prompts[id]; cancel != nil {
		cancel()
	} else {
		a.early[id] = true
	}
}

func stopReason(r host.StopReason) (sdk.StopReason, error) {
	switch r {
	case host.StopEndTurn:
		return sdk.StopReasonEndTurn, nil
	case host.StopMaxTokens, host.StopBudget:
		return sdk.StopReasonMaxTokens, nil
	case host.StopMaxTurns:
		return sdk.StopReasonMaxTurnRequests, nil
	case host.StopRefusal:
		return sdk.StopReasonRefusal, nil
	case host.StopCancelled, host.StopTimeout:
		return sdk.StopReasonCancelled, nil
	case host.StopError:
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
	m, err := host.ParseMode(string(p.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err := s.h.SetMode(m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.flush() // the updates that say so come first
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

// UnstableDeleteSession deletes a session of session/list: one open here is
// closed first, then the host removes its log (and its subagents'); one open
// in another dsh process is refused.
func (a *Agent) UnstableDeleteSession(_ context.Context, p sdk.UnstableDeleteSessionRequest) (sdk.UnstableDeleteSessionResponse, error) {
	id := string(p.SessionId)
	if _, err := a.logPath(id); err != nil {
		return sdk.UnstableDeleteSessionResponse{}, err
	}
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s != nil {
		if err := s.close(); err != nil {
			a.o.Logger.Warn("closing the session before deleting it", "session", id, "err", err)
		}
	}
	err := host.DeleteSession(a.o.SessionDir, id)
	switch {
	case errors.Is(err, host.ErrNoSession):
		return sdk.UnstableDeleteSessionResponse{}, unknownSession(id)
	case err != nil:
		return sdk.UnstableDeleteSessionResponse{}, &sdk.RequestError{Code: -32603, Message: "Cannot delete the session: " + err.Error(),
			Data: map[string]any{"sessionId": id}}
	}
	return sdk.UnstableDeleteSessionResponse{}, nil
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

// SetSessionConfigOption changes the mode, the model or the thinking level;
// the change is logged, so a reloaded session keeps it.
func (a *Agent) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "dsh's config options take a value id"})
	}
	s, err := a.session(p.ValueId.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if err := a.setOption(s, string(p.ValueId.ConfigId), string(p.ValueId.Value)); err != nil {
		var re *sdk.RequestError
		if !errors.As(err, &re) {
			err = sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	s.flush() // the updates that say so come first
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(s)}, nil
}

// modeState offers the permission modes the session may be set to (auto only
// where its commands run in the sandbox) as session modes.
func modeState(h *host.Session) *sdk.SessionModeState {
	modes := make([]sdk.SessionMode, 0, len(host.Modes))
	for _, m := range h.Modes() {
		name, desc := modeText(m)
		modes = append(modes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: name, Description: sdk.Ptr(desc)})
	}
	return &sdk.SessionModeState{AvailableModes: modes, CurrentModeId: sdk.SessionModeId(h.Mode())}
}

func modeText(m host.Mode) (name, desc string) {
	switch m {
	case host.ModeDefault:
		return "Default", "Ask before changing files or running commands"
	case host.ModeAcceptEdits:
		return "Accept edits", "Change files without asking; ask before running commands"
	case host.ModeAuto:
		return "Auto (sandboxed)", "Run commands and change files without asking: commands run in the sandbox"
	case host.ModeBypass:
		return "Bypass permissions", "Never ask"
	case host.ModeReadOnly:
		return "Read only", "Refuse every call that changes files or runs commands"
	case host.ModePlan:
		return "Plan", "Read, search and fetch, then present a plan to approve; refuse every change until then"
	}
	return string(m), string(m)
}
