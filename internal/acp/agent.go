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
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/settings"
	"github.com/dsh-dev/dsh/internal/view"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Options configure the agent.
type Options struct {
	SessionDir string // where session logs live
	// Settings resolves the settings of a session in cwd: its project's file,
	// the user's, the flags and the environment (nil: the files and the
	// environment alone).
	Settings func(cwd string) (settings.Settings, error)
	// Model is the model sessions start with where their settings name none,
	// shown as the current one in the model picker.
	Model string
	// Models lists the models the picker offers (the provider's, with the
	// built-in list when that fails); nil offers the built-in list.
	Models  func(context.Context) ([]models.Info, error)
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

	modelsOnce sync.Once
	models     []models.Info

	waiting  *announcements // new sessions' announcements, once serving
	listPage int            // sessions per session/list page; 0 is listPage

	mu       sync.Mutex
	peer     peer
	termMeta bool
	fs       sdk.FileSystemCapabilities // what the client offers of its files
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Settings == nil {
		getenv, dir := o.Getenv, o.SessionDir
		o.Settings = func(cwd string) (settings.Settings, error) {
			return settings.Resolve(context.Background(), settings.Input{Cwd: cwd, Getenv: getenv, SessionDir: dir})
		}
	}
	return &Agent{o: o, sessions: map[string]*sess{}}
}

func (a *Agent) setPeer(p peer) {
	a.mu.Lock()
	a.peer = p
	a.mu.Unlock()
}

// Initialize answers with what dsh supports: loading, listing, resuming and
// closing sessions, embedded context and images in prompts (no audio), MCP
// servers over stdio, HTTP and SSE, and sign-in with an API key.
func (a *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	on, _ := p.ClientCapabilities.Meta["terminal_output"].(bool)
	a.mu.Lock()
	a.termMeta = on
	a.fs = p.ClientCapabilities.Fs
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{},
				Close:                 &sdk.SessionCloseCapabilities{},
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
	st, err := a.settings(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	n := a.ignored(st)
	o := a.hostOptions(st, p.McpServers, p.AdditionalDirectories, n)
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
	a.equip(s, h, st.Config, n)
	s.attach(h)
	a.add(s)
	// The client can place updates only once it has the session's id.
	if a.waiting != nil {
		a.waiting.after(s.id, s.announced)
	} else {
		s.announced()
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(h.ID()), Modes: modeState(h.Mode(), h.AutoAvailable()),
		ConfigOptions: a.configOptions(s)}, nil
}

// settings are the settings of a session in cwd; a bad file is the client's
// error, with the file and line.
func (a *Agent) settings(cwd string) (settings.Settings, error) {
	st, err := a.o.Settings(cwd)
	if err != nil {
		return settings.Settings{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return st, nil
}

// ignored starts a session's notes with the project settings that were not
// applied: the user reads them in the thread when it opens.
func (a *Agent) ignored(st settings.Settings) *notes {
	n := &notes{}
	for _, msg := range st.Ignored() {
		a.o.Logger.Warn(msg)
		n.add(msg)
	}
	return n
}

// equip gives a session what it offers besides the host's: its configuration,
// commands and notes.
func (a *Agent) equip(s *sess, h *host.Session, cfg config.Config, n *notes) {
	s.cfg, s.notes = cfg, n
	s.cmds = command.With(a.editorCommands(s.br.cwd, n.add), command.For(h.Commands(), command.Editor))
}

// LoadSession replays a session's log as updates — the same cards it showed
// live — while the host folds it into the session's state, in one pass over the
// file; the conversation goes on in the same log.
func (a *Agent) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	s, err := a.reopen(string(p.SessionId), p.Cwd, p.McpServers, p.AdditionalDirectories, true)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: modeState(s.h.Mode(), s.h.AutoAvailable()), ConfigOptions: a.configOptions(s)}, nil
}

// ResumeSession reattaches a session without replaying it: the client still
// shows its history.
func (a *Agent) ResumeSession(_ context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	s, err := a.reopen(string(p.SessionId), p.Cwd, p.McpServers, p.AdditionalDirectories, false)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: modeState(s.h.Mode(), s.h.AutoAvailable()), ConfigOptions: a.configOptions(s)}, nil
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
	st, err := a.settings(cwd)
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
	a.equip(s, h, st.Config, n)
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
	ws, err := workspace.New(cwd, false)
	if err != nil {
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	_ = ws.Close()
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
func (a *Agent) hostOptions(st settings.Settings, client []sdk.McpServer, dirs []string, n *notes) host.Options {
	o := st.Options()
	o.Roots = dirs
	if len(dirs) > 0 {
		n.add("dsh may also read and change files in: " + strings.Join(dirs, ", "))
	}
	o.MCP = mcpFor(o.MCP, client, n)
	o.MCPNotice = n.add
	o.Ask, o.Now = true, a.o.Now
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
	s := newSess(id, p, newBridge(cwd, termMeta, pres), a.diag)
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
// session/cancel — unless the model or the log fails, which is an error.
func (a *Agent) Prompt(_ context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	// The turn does not use the request's context: the SDK cancels it when the
	// same session gets another prompt, which is refused here instead.
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, images, err := promptText(p.Prompt, func() map[string]string { return s.h.ResourceMentions(context.Background()) })
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.waitReady()
	if len(images) == 0 {
		prompt, handled, err := a.runCommand(s, text)
		if handled {
			s.flush()
			if err != nil {
				return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: err.Error()}
			}
			return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
		}
		text = prompt
	}
	if _, err := s.h.Provider(); err != nil { // say what to configure before logging a prompt that cannot run
		return sdk.PromptResponse{}, promptError(err)
	}
	stop, err := s.h.Prompt(context.Background(), text, images...)
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
		return sdk.PromptResponse{}, promptError(err)
	}
	reason, err := stopReason(stop)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: reason, Usage: s.takeTurnUsage()}, nil
}

func stopReason(r agent.StopReason) (sdk.StopReason, error) {
	switch r {
	case agent.StopEndTurn:
		return sdk.StopReasonEndTurn, nil
	case agent.StopMaxTokens, agent.StopBudget:
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
	case agent.ModePlan:
		return "Plan", "Read, search and fetch, then present a plan to approve; refuse every change until then"
	}
	return string(m), string(m)
}
