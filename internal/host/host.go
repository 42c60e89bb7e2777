// Package host owns live sessions. It is the one place a session is assembled —
// workspace, log, the session's tool registry and state, system prompt, provider
// and agent — and the one owner of its prompt, cancel and close. Every consumer
// (the terminal chat, dsh run, dsh tool, dsh demo, dsh acp) opens sessions here
// and is a fold over the session's one ordered stream of events: the records the
// log persists, in the order it persists them, and the moments it does not keep
// (model text as it streams, a call starting, a permission being asked).
package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/dsh-dev/dsh/internal/command"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/session/usage"
	"github.com/dsh-dev/dsh/internal/skills"
	"github.com/dsh-dev/dsh/internal/telemetry"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/skill"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Bounded waits: closing never hangs on a turn that will not end or a consumer
// that stopped reading. A command that ignores SIGTERM is killed after the bash
// tool's grace period, which turnWait outlasts.
const (
	turnWait  = 3 * time.Second
	drainWait = time.Second
)

// Errors of the session's own lifecycle.
var (
	ErrClosed = errors.New("the session is closed")
	ErrBusy   = agent.ErrBusy
)

// Options configure a session.
type Options struct {
	SessionDir   string // where logs live (already resolved)
	Root         string // the workspace root: the session's directory
	AllowOutside bool   // let tools touch paths outside the root
	// ScratchLog: the logs are removed when the process ends (dsh tool's), so
	// they are not synced to disk (session.Options.Scratch).
	ScratchLog bool
	// DiscardEmpty removes a new session's log at Close if nothing but its
	// header was logged (the chat opens its session before the first word).
	DiscardEmpty bool
	// SkillDirs are where the session's skills are found (skills.Dirs).
	SkillDirs []skills.Dir
	// CommandDirs are where the user's and the project's custom slash
	// commands are (command.Dirs).
	CommandDirs []command.Dir
	// AgentDirs are where its custom agents are found (agents.Dirs).
	AgentDirs []agents.Dir
	// sub is set for a child session (a subagent's): see child.go.
	sub *subagent
	// Roots are further directories the session works in (an editor's
	// additional directories), confined and sandboxed like the root.
	Roots   []string
	KeepEnv []string
	// Tools are offered besides the built-in ones (a session's MCP servers).
	Tools []tool.Tool
	// Closers are closed when the session ends, after its tools' state. The
	// session owns them from Create or Load on, even when opening fails.
	Closers []io.Closer
	// servers are the MCP servers startMCP started, for their prompts.
	servers *mcp.Servers
	// MCP are the session's MCP servers (the configuration's, an editor's),
	// started in the workspace when the session opens (Create, Load) and
	// stopped when it closes. A server that does not start, or stops, is told
	// to the user through MCPNotice (nil: Warn) and to the model with the next
	// prompt. Version is dsh's, reported to the servers.
	MCP       []mcp.ServerConfig
	MCPNotice func(string)
	// MCPTokens keeps the sign-ins of MCP servers that ask for one; a server
	// with none is signed in to in the background, its link told through
	// MCPNotice (nil: no sign-in kept or offered).
	MCPTokens mcp.TokenStore
	// MCPLog is the debug log the servers' log messages go to (nil: dropped).
	MCPLog  *slog.Logger
	Version string
	// StatusLine is Claude Code's statusLine command, run as a command hook
	// runs whenever the status changes (at most every 300 ms), told the
	// session as JSON; its first line is Status.Line. "": none.
	StatusLine string
	// Models lists the models the provider offers (the picker's and /model's
	// list); nil offers the built-in list.
	Models func(context.Context) ([]models.Info, error)

	Mode agent.Mode // the mode a new session starts in (a loaded one keeps its own)
	// NoBypass, if set, is the settings file whose disableBypassPermissionsMode
	// turns the bypass mode off for the session (a loaded one's too).
	NoBypass string
	// Files is the editor's view of the files, when the client offers one
	// (see tool.Session.Files); nil is the disk.
	Files tool.Files
	// Sandbox confines bash commands (internal/sandbox). The auto mode exists only
	// when it is on and the kernel supports it; otherwise auto falls back to
	// asking, with a warning.
	Sandbox sandbox.Mode
	// Network, if set, filters the network of sandboxed commands and
	// web_fetch by domain (network.allowed_domains and denied_domains).
	Network *netproxy.Proxy
	// SafeCommands are the user's additions to the commands that run unasked.
	SafeCommands []string
	// CheckpointExclude are the user's gitignore patterns of files that
	// checkpoints never copy.
	CheckpointExclude []string
	// LSP configures the language servers that check the file tools' changes;
	// none starts unless LSP.Trust says so. They run sandboxed as Sandbox says.
	LSP lsp.Config
	// Hooks are the user's hook commands (Claude Code's events), run in the
	// workspace root; settings leave out an untrusted project's.
	Hooks     []hooks.Hook
	Model     string
	Thinking  string // the thinking level (provider.Request.Thinking) until a model record says otherwise
	MaxTokens int
	// Rules are the user's permission rules (settings read them from every
	// file); EditRules adds or removes one of the user's own and returns the
	// rules then in force (/permissions).
	Rules     *rules.Set
	EditRules func(effect, rule string, remove bool) (*rules.Set, error)
	// FallbackModel is the model a turn goes on with when Model is overloaded
	// or unavailable (config's fallback_model); "" means none.
	FallbackModel string
	// MaxTurns bounds a prompt's model round-trips (0: agent.DefaultMaxTurns);
	// MaxCost, if positive, its cost in US dollars as /cost prices it (dsh
	// run's --max-turns and --max-budget-usd).
	MaxTurns int
	MaxCost  float64
	// ContextWindow overrides the model table's context window (0: the table's);
	// CompactAt is the share of it past which a turn compacts the context first
	// (0: agent.DefaultCompactAt).
	ContextWindow int64
	CompactAt     float64
	// ContextWindows is the configuration's context window for a model, if it
	// sets one; it goes before ContextWindow and follows a model change.
	ContextWindows func(model string) (int64, bool)
	// Provider returns the model provider. It is called when a prompt first
	// needs it, so a missing key shows on the prompt, not when the session opens.
	// Without one (dsh tool) the session calls no model, and its status counts
	// the context without the system prompt and tools (agent.Config.NoModel).
	Provider func() (provider.Provider, error)
	// Client names the consumer this process shows the session in
	// ("terminal", "editor"): a decision record names it when the answer
	// came from it rather than from a client of the control socket.
	Client string
	// Live, if set, is called once the session is open, to let other
	// clients join it (the control socket); what it returns is closed with
	// the session. A subagent's session is not offered.
	Live func(*Session) (io.Closer, error)
	// LiveLater holds back what runs beside a new session's consumer — Live
	// and the first checkpoint walk — until the consumer calls GoLive: one
	// that answers a request for the session (ACP's session/new) does not make
	// the answer wait for the control socket, nor share the CPU with the walk.
	// Create only.
	LiveLater bool
	// Ask says that a consumer answers permission and question events. Without
	// one, calls that need asking are refused and questions are not asked, with
	// a message the model reads.
	Ask bool
	// Telemetry, if set, exports the session's turns, model calls and tool
	// calls as OpenTelemetry spans (telemetry.FromEnv); nil exports nothing.
	Telemetry *telemetry.Config

	Now func() time.Time
	// Warn receives harness warnings the user should see (project instructions
	// that cannot be read, a presenter that failed). nil drops them.
	Warn func(string)
}

// Session is one live session.
type Session struct {
	o     Options
	ws    *workspace.Workspace
	log   *session.Log
	reg   *tool.Registry
	tools *tool.Session
	agent *agent.Agent
	bus   *bus
	notes *mcpNotes
	rules atomic.Pointer[rules.Set] // the permission rules in force (/permissions changes them)

	skills []skills.Skill // what the skill tool loads, listed in the system prompt
	custom []Command      // the user's and the project's custom slash commands
	agents []agents.Agent // the custom agents the task tool offers
	mcp    *mcp.Servers   // nil without servers
	otel   *exporting     // nil: no telemetry export

	provMu sync.Mutex
	prov   provider.Provider

	mu      sync.Mutex
	ctx     context.Context // ends when the session is closed
	stop    context.CancelFunc
	turn    context.CancelFunc // the running turn's, or nil
	turnEnd chan struct{}      // closed when the running turn ends
	closed  bool

	usage      usageFold
	working    atomic.Bool  // a turn runs (Status.State)
	asking     atomic.Int32 // permissions and questions waiting for the user
	statusMu   sync.Mutex
	lastStatus Status      // the last one published
	statusLine *statusLine // nil: none

	modelsOnce sync.Once
	models     []models.Info

	undo     undoState
	steering steering // prompts for the running turn's next step

	hooksStarted bool              // the SessionStart hooks ran (guarded by mu)
	transcript   *hooks.Transcript // what hooks read at transcript_path, made at the first hook (guarded by mu)
	hooks        *hooks.Runner     // nil: none
	// transcriptWarn says once that the transcript could not be brought up
	// to date: each hook would say it again.
	transcriptWarn sync.Once

	// queue is the next turn's ticket: a prompt submitted while a turn runs
	// waits for it, in order of arrival (a channel's waiting senders are
	// served first come, first served). dropQueued, closed by Cancel, makes
	// the waiting ones give up (guarded by mu).
	queue      chan struct{}
	dropQueued chan struct{}

	// kids are the subagents running now, whose mode follows this session's
	// (mode is the last one logged, "" before any); slots bound how many run
	// at once.
	kids struct {
		sync.Mutex
		m    map[*Session]struct{}
		mode agent.Mode
	}
	slots chan struct{}

	titleMu sync.Mutex
	title   string // the last title record's

	liveOnce sync.Once // GoLive's
}

func (o *Options) normalize() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = agent.ModeDefault
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	if o.MCPNotice == nil {
		o.MCPNotice = o.Warn
	}
}

// openWorkspace opens o.Root, widened to o.Roots.
func openWorkspace(o Options) (*workspace.Workspace, error) {
	ws, err := workspace.New(o.Root, o.AllowOutside)
	if err != nil {
		return nil, err
	}
	for _, r := range o.Roots {
		if err := ws.AddRoot(r); err != nil {
			_ = ws.Close()
			return nil, fmt.Errorf("additional directory: %w", err)
		}
	}
	if o.sub == nil && !o.ScratchLog && o.SessionDir != "" {
		// Where a killed dsh's last writes were, so that this session clears
		// what they left (see workspace.UseJournal).
		sum := sha256.Sum256([]byte(ws.Root()))
		ws.UseJournal(filepath.Join(o.SessionDir, ".writes-"+hex.EncodeToString(sum[:8])))
	}
	return ws, nil
}

// noteRoots tells the model, with its next prompt, where else it may work.
func noteRoots(ws *workspace.Workspace, n *mcpNotes) {
	if extra := ws.Roots()[1:]; len(extra) > 0 {
		n.add("Besides the workspace root, files may be read and changed in: " + strings.Join(extra, ", "))
	}
}

// Create starts a new session in o.Root.
func Create(o Options) (*Session, error) {
	o.normalize()
	ws, err := openWorkspace(o)
	if err != nil {
		return nil, errors.Join(err, closeAll(o.Closers))
	}
	notes := startMCP(&o, ws.Root())
	noteRoots(ws, notes)
	id := session.NewID(o.Now())
	s := assemble(o, ws, nil, id, notes)
	// The system prompt is rendered once and logged in the header, which the
	// agent folds like a reloaded session does.
	log, err := session.Create(o.SessionDir, id, ws.Root(), session.Options{Now: o.Now, System: s.systemPrompt(), Scratch: o.ScratchLog, DiscardEmpty: o.DiscardEmpty})
	if err != nil {
		return nil, errors.Join(err, s.Kill())
	}
	s.log = log
	s.agent.Fold(log.Header())
	s.statusLine.poke()
	if !o.LiveLater {
		s.startCheckpoints()
		s.goLive()
	}
	return s, nil
}

// Load reopens the session logged at path (DIR/ID.jsonl), with o.Root as its
// workspace from now on. It streams the log once: every record is folded into the
// session (model context, mode, approvals, the tools' state) and, if replay is not
// nil, handed to it for the consumer's history view (with the session, for its
// Registry), progress included. Nothing of the history is held in memory beyond
// what the model context needs.
func Load(o Options, path string, replay func(*Session, session.Record) error) (*Session, error) {
	o.normalize()
	ws, err := openWorkspace(o)
	if err != nil {
		return nil, errors.Join(err, closeAll(o.Closers))
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	notes := startMCP(&o, ws.Root())
	noteRoots(ws, notes)
	s := assemble(o, ws, nil, id, notes)
	// The consumer's replay runs beside the scan and the fold, in order: a long
	// history loads on two cores. Records go over in batches: one hand-over
	// (and, when the replay waits, one wake-up) for many records.
	recs := make(chan []session.Record, replayAhead)
	free := make(chan []session.Record, replayAhead+2) // replayed batches, emptied, for reuse
	replayed := make(chan error, 1)
	budget := newInflight()
	go func() {
		var err error
		for batch := range recs {
			for i, r := range batch {
				if err == nil && replay != nil {
					err = replay(s, r)
				}
				budget.give(recordSize(r))
				batch[i] = session.Record{} // a batch kept for reuse holds nothing
			}
			select {
			case free <- batch[:0]:
			default:
			}
		}
		replayed <- err
	}()
	var batch []session.Record
	send := func() {
		if len(batch) > 0 {
			recs <- batch
			batch = nil
		}
	}
	// Each result's meta is decoded as its record is read, into the tools' memos
	// that the fold and the replay then hit.
	log, err := session.Open(path, session.Options{Now: o.Now, Meta: s.reg}, func(r session.Record) error {
		if r.Type == session.TypeHeader && r.SessionID != id {
			return fmt.Errorf("session log %s belongs to session %s", path, r.SessionID)
		}
		if r.Type == session.TypeHeader && r.System == "" {
			h := r
			h.System = s.systemPrompt() // a log from before the prompt was logged
			s.agent.Fold(h)
		} else {
			s.agent.Fold(r)
		}
		s.undo.fold(r)
		s.foldTitle(r)
		n := recordSize(r)
		if !budget.tryTake(n) {
			send() // what holds the budget must be on its way to give it back
			budget.take(n)
		}
		if batch == nil {
			select {
			case batch = <-free:
			default:
				batch = make([]session.Record, 0, replayBatch)
			}
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || n > maxInflight {
			send()
		}
		if n > maxInflight {
			budget.drain()
		}
		if n > bigRecord {
			// Its copies (line, decoded, card, encoded) are garbage now: the
			// heap goal they raised and the pages they took would make the
			// next one's peak theirs plus its own (a 490 MB log of 4 MiB
			// results peaked at 86-97 MiB, 56-60 MiB with this).
			debug.FreeOSMemory()
		}
		return nil
	})
	send()
	close(recs)
	err = errors.Join(err, <-replayed)
	if err != nil {
		if log != nil {
			_ = log.Close()
		}
		_ = s.Kill() // nothing ran yet; there is nothing to report
		return nil, err
	}
	s.log = log
	s.statusLine.poke()
	s.startCheckpoints()
	s.goLive()
	return s, nil
}

// assemble builds a session around its log (which Load sets once it is open).
func assemble(o Options, ws *workspace.Workspace, log *session.Log, id string, notes *mcpNotes) *Session {
	auto := o.Sandbox.Enabled() && sandbox.Check(o.Sandbox) == nil
	if o.Mode == agent.ModeAuto && !auto {
		o.Warn(agent.ErrNoSandbox.Error() + "; asking before each command instead")
	}
	if o.Mode == agent.ModeBypass && o.NoBypass != "" && o.sub == nil {
		o.Warn(agent.BypassOff(o.NoBypass).Error() + "; asking before each command instead")
	}
	if o.Network != nil && o.sub == nil && !o.Sandbox.Enabled() {
		o.Warn("network.allowed_domains and denied_domains hold for web_fetch only: commands run unsandboxed (--sandbox off), where no proxy can hold them")
	}
	sk, err := skills.All(o.SkillDirs)
	if err != nil {
		o.Warn("skills: " + err.Error())
	}
	if _, notice := skills.Prompt(sk); notice != "" && o.sub == nil {
		o.Warn(notice)
	}
	var custom []Command
	var ag []agents.Agent
	if o.sub == nil {
		if custom, err = command.All(o.CommandDirs); err != nil {
			o.Warn("custom commands not offered: " + err.Error())
		}
		if ag, err = agents.All(o.AgentDirs); err != nil {
			o.Warn("custom agents: " + err.Error())
		}
		if _, notice := command.Prompt(custom); notice != "" {
			o.Warn(notice)
		}
		if _, notice := agents.Listed(ag); notice != "" {
			o.Warn(notice)
		}
	}
	var reg *tool.Registry
	if o.sub != nil {
		reg = o.sub.reg
	} else {
		reg = toolset.New(toolset.Options{KeepEnv: o.KeepEnv, Extra: o.Tools, Sandbox: o.Sandbox, Network: o.Network, SafeCommands: o.SafeCommands,
			Skills: len(sk) > 0 || len(custom) > 0, Agents: ag})
	}
	notes.useRegistry(reg)
	s := &Session{o: o, ws: ws, log: log, reg: reg, tools: tool.NewSession(id, ws), bus: newBus(), notes: notes, skills: sk, custom: custom, agents: ag, mcp: o.servers,
		queue: make(chan struct{}, 1), dropQueued: make(chan struct{})}
	s.rules.Store(o.Rules)
	if o.sub == nil {
		s.tools.Subagents = subagents{s}
		s.slots = make(chan struct{}, maxSubagents)
	}
	skill.Offer(s.tools, sk, custom)
	s.tools.Files = o.Files
	servers := o.LSP
	servers.Sandbox = o.Sandbox // language servers are confined as commands are
	lsp.Attach(s.tools, lsp.NewManager(ws.Root(), servers))
	s.usage.f = usage.New(o.Model)
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.hooks = hookRunner(o, ws.Root())
	if o.StatusLine != "" && o.sub == nil {
		s.statusLine = newStatusLine(s, o.StatusLine, ws.Root())
	}
	cfg := agent.Config{
		Provider:      hostProvider{s},
		Registry:      reg,
		Log:           recorder{s},
		Tools:         s.tools,
		Model:         o.Model,
		Thinking:      o.Thinking,
		MaxTokens:     o.MaxTokens,
		MaxTurns:      o.MaxTurns,
		MaxCost:       o.MaxCost,
		Spent:         func() float64 { return s.usage.total().Cost },
		FallbackModel: o.FallbackModel,
		Rules:         s.rules.Load,
		Mode:          o.Mode,
		Auto:          auto,
		NoBypass:      o.NoBypass,
		OnDelta:       func(d provider.Delta) { s.bus.publish(Event{Kind: KindDelta, Delta: d}) },
		OnCallStart:   func(id string) { s.bus.publish(Event{Kind: KindCallStarted, CallID: id}) },
		Effect:        s.effect,
		OnUsage:       s.onUsage,
		Folded:        s.folded,
		Window:        s.window,
		Hooks:         s.hooks,
		HookBase:      s.hookBase,
		NoModel:       o.Provider == nil,
		Steer:         s.steering.take,
	}
	if o.Ask {
		cfg.Permit, cfg.Ask = s.permit, s.ask
	}
	if o.sub != nil {
		o.sub.configure(s, &cfg)
	}
	cfg.ContextWindow, cfg.CompactAt = o.ContextWindow, o.CompactAt
	s.agent = agent.New(cfg)
	s.startTelemetry()
	notes.follow(s.publishStatus)
	track(s)
	return s
}

// systemPrompt renders the session's system prompt: its workspace, its tools'
// guidance, today's date and the root's instructions.
func (s *Session) systemPrompt() string {
	system, err := agent.SessionPrompt(s.ws.Root(), s.reg, s.o.Now())
	if err != nil {
		s.o.Warn(fmt.Sprintf("ignoring project instructions: %v", err))
	}
	listed, _ := skills.Prompt(s.skills)
	cmds, _ := command.Prompt(s.custom)
	system += listed + cmds
	if s.o.sub != nil {
		system += s.o.sub.prompt()
	}
	return system
}

// ID is the session id.
func (s *Session) ID() string { return s.tools.ID }

// Header is the log's header record, which is logged before anyone can subscribe.
func (s *Session) Header() session.Record { return s.log.Header() }

// Path is the log's path.
func (s *Session) Path() string { return s.log.Path() }

// Root is the workspace root.
func (s *Session) Root() string { return s.ws.Root() }

// Registry is the session's tools, for presenting its records.
func (s *Session) Registry() *tool.Registry { return s.reg }

// AutoAvailable reports whether the auto mode may be set: commands run in the
// sandbox.
func (s *Session) AutoAvailable() bool { return s.agent.AutoAvailable() }

// Modes are the modes this session may be set to (ModesFor its status).
func (s *Session) Modes() []agent.Mode {
	return ModesFor(Status{Confined: s.agent.AutoAvailable(), NoBypass: !s.agent.BypassAvailable()})
}

// ModesFor are the modes a session of status st may be set to: auto only
// where its commands run in the sandbox, bypass unless a policy turned it off.
func ModesFor(st Status) []agent.Mode {
	var out []agent.Mode
	for _, m := range agent.Modes {
		if (m != agent.ModeAuto || st.Confined) && (m != agent.ModeBypass || !st.NoBypass) {
			out = append(out, m)
		}
	}
	return out
}

// Mode is the permission mode in force.
func (s *Session) Mode() agent.Mode { return s.agent.Mode() }

// SetMode changes the permission mode, logged, from the next call on.
func (s *Session) SetMode(m agent.Mode) error {
	if s.isClosed() {
		return ErrClosed
	}
	return s.agent.SetMode(m)
}

// SetModel changes the model and thinking level, logged (a model record), from
// the next model call on.
func (s *Session) SetModel(model, thinking string) error {
	if s.isClosed() {
		return ErrClosed
	}
	return s.agent.SetModel(model, thinking)
}

// Model returns the model and thinking level in force; "" means the
// provider's own.
func (s *Session) Model() (model, thinking string) { return s.agent.Model() }

// Provider returns the model provider, resolving it on first use. A failure
// is not kept: a key given since (dsh login, an editor's sign-in) is found by
// the next prompt.
func (s *Session) Provider() (provider.Provider, error) {
	s.provMu.Lock()
	defer s.provMu.Unlock()
	if s.prov != nil {
		return s.prov, nil
	}
	if s.o.Provider == nil {
		return nil, errors.New("no model provider is configured")
	}
	p, err := s.o.Provider()
	if err != nil {
		return nil, err
	}
	s.prov = p
	return p, nil
}

// Subscribe starts delivering the session's events, from now on, to fn on a
// goroutine of its own. fn may block (a permission prompt waits for the user)
// without holding up the session: events queue, and under pressure running
// commands' progress is dropped — never records that replay would show.
func (s *Session) Subscribe(fn func(Event)) *Subscription {
	sub := s.bus.subscribe(fn)
	s.notes.deliver(s.put) // what waited for someone to see it (a sign-in's link)
	return sub
}

// SubscribeRecords is Subscribe to the records alone, for a consumer that
// shows only what the log holds (dsh tool): the moments between records
// (status, usage, a call starting) do not wake it.
func (s *Session) SubscribeRecords(fn func(Event)) *Subscription {
	sub := s.bus.subscribeAt(fn, nil, true)
	s.notes.deliver(s.put)
	return sub
}

// Prompt runs one turn on text and the images attached to it. It returns
// ErrBusy while another turn runs and ErrClosed after Close; a missing provider
// is an error before anything is logged. A prompt a UserPromptSubmit hook
// blocks is not sent: StopRefusal, with only the hooks' records logged.
func (s *Session) Prompt(ctx context.Context, text string, images ...card.Content) (agent.StopReason, error) {
	return s.prompt(ctx, agent.Turn{}, text, images...)
}

// prompt is Prompt with what a custom command changes for its turn.
func (s *Session) prompt(ctx context.Context, turn agent.Turn, text string, images ...card.Content) (agent.StopReason, error) {
	s.undo.mu.Lock()
	early := s.undo.early // a command body's !`cmd` ran after this prompt's "before"
	s.undo.early = 0
	s.undo.mu.Unlock()
	if early > 0 {
		defer s.endCheckpoint(early)
	}
	if _, err := s.Provider(); err != nil {
		return agent.StopError, err
	}
	tctx, done, err := s.beginTurn(ctx)
	if err != nil {
		return agent.StopError, err
	}
	defer done()
	if blocked, err := s.promptHooks(tctx, text); err != nil || blocked {
		if err != nil {
			return agent.StopError, err
		}
		// The turn did not happen, as after a refusal (ACP's: the prompt is
		// not in the next one's context); the hook's card says why.
		return agent.StopRefusal, nil
	}
	images = s.attachMentions(tctx, text, images) // @SERVER:URI: the MCP resources it names
	// The workspace is snapshotted before the prompt and at its end: what it
	// changed can be undone, and what the user changes after it told apart.
	if early == 0 {
		n := s.beginCheckpoint(tctx)
		defer s.endCheckpoint(n)
	}
	return s.agent.PromptTurn(tctx, turn, withNotes(text, s.notes.take()), images...)
}

// Compact replaces the model context with a summary the model writes of it
// (/compact [focus]), logged as a compaction record. Like a prompt, it returns
// ErrBusy while a turn runs and ErrClosed after Close; Cancel stops it.
func (s *Session) Compact(ctx context.Context, focus string) error {
	if _, err := s.Provider(); err != nil {
		return err
	}
	tctx, done, err := s.beginTurn(ctx)
	if err != nil {
		return err
	}
	defer done()
	return s.agent.Compact(tctx, focus)
}

// ContextUsage is how full the model's context window is (known after each
// model call, estimated before it).
func (s *Session) ContextUsage() agent.ContextUsage { return s.agent.ContextUsage() }

// RunTool runs one call the user asked for directly (dsh tool): it is logged like
// a model's call, with no permission step.
func (s *Session) RunTool(ctx context.Context, name string, args []byte) (tool.Result, error) {
	tctx, done, err := s.beginTurn(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	defer done()
	return s.agent.RunTool(tctx, name, args)
}

// beginTurn claims the session for one turn, whose context ends with ctx, with
// Cancel and with Close.
func (s *Session) beginTurn(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, nil, ErrClosed
	case s.turn != nil:
		s.mu.Unlock()
		return nil, nil, ErrBusy
	}
	tctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	end := make(chan struct{})
	s.turn, s.turnEnd = cancel, end
	s.working.Store(true)
	s.mu.Unlock()
	turnStarted()
	s.publishStatus() // not under mu: the status reads the session
	return tctx, func() {
		stop()
		cancel()
		s.mu.Lock()
		s.turn = nil
		s.working.Store(false)
		s.mu.Unlock()
		turnEnded()
		s.publishStatus()
		close(end)
	}, nil
}

// Cancel cancels the running turn, if any: the model stops and running commands
// are killed; the turn ends as cancelled.
// The prompts queued behind it are dropped (they end as cancelled, unlogged).
func (s *Session) Cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn != nil {
		s.turn()
	}
	close(s.dropQueued)
	s.dropQueued = make(chan struct{})
}

// Running reports whether a turn is running.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turn != nil
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close ends the session: the running turn is cancelled and waited for (at most
// turnWait), the tools' state is closed (background jobs and commands killed, no
// state accepted after), then the log; subscribers get what is queued (at most
// drainWait). It is idempotent.
func (s *Session) Close() error {
	end, first := s.markClosed()
	if !first {
		return nil
	}
	if end != nil {
		select {
		case <-end:
		case <-time.After(turnWait):
			s.o.Warn(fmt.Sprintf("session %s: the turn did not end in time; its processes are killed", s.ID()))
		}
	}
	s.endHooks()
	return s.finish(false)
}

// Kill is the exit path: it kills every process the session started, at once and
// synchronously, then closes the log. The turn, if one is running, ends on its own
// (its last records may not be logged).
func (s *Session) Kill() error {
	if _, first := s.markClosed(); !first {
		return nil
	}
	return s.finish(true)
}

func (s *Session) markClosed() (chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.closed = true
	var end chan struct{}
	if s.turn != nil {
		s.turn()
		end = s.turnEnd
	}
	s.stop()
	return end, true
}

func (s *Session) finish(now bool) error {
	defer untrack(s)
	var err error
	if now {
		err = s.tools.Kill()
	} else {
		err = s.tools.Close()
	}
	err = errors.Join(err, closeAll(s.o.Closers))
	s.hooks.Close()
	s.statusLine.close()
	s.endCheckpoints(now)
	if s.log != nil {
		err = errors.Join(err, s.log.Close())
	}
	s.mu.Lock()
	if s.transcript != nil {
		err = errors.Join(err, s.transcript.Close())
	}
	s.mu.Unlock()
	s.bus.close(drainWait)
	s.stopTelemetry(now)
	return err
}

func closeAll(cs []io.Closer) error {
	errs := make([]error, len(cs))
	for i, c := range cs {
		errs[i] = c.Close()
	}
	return errors.Join(errs...)
}

// recorder puts the agent's records in the log and publishes them, in one
// order, to the session's subscribers.
type recorder struct{ s *Session }

func (r recorder) Put(rec session.Record) (session.Record, error) {
	out, err := r.s.put(rec)
	if err == nil && out.Type == session.TypeMode {
		r.s.modeToKids(agent.Mode(out.Mode))
	}
	return out, err
}

// hostProvider resolves the provider lazily and tells subscribers when a model
// request starts, so text left from a stream that failed is not glued to the next.
type hostProvider struct{ s *Session }

func (p hostProvider) Name() string {
	if inner, err := p.s.Provider(); err == nil {
		return inner.Name()
	}
	return "(none)"
}

func (p hostProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	inner, err := p.s.Provider()
	if err != nil {
		return nil, err
	}
	p.s.bus.publish(Event{Kind: KindModelRequest})
	return inner.Stream(ctx, req, onDelta)
}

// permit asks the subscribers: the permission event carries the request and
// takes the first answer.
func (s *Session) permit(ctx context.Context, req agent.PermissionRequest) (agent.Decision, error) {
	if s.o.sub != nil {
		return s.o.sub.permit(ctx, s.ID(), req)
	}
	return s.askPermission(ctx, &Permission{Request: req})
}

func (s *Session) askPermission(ctx context.Context, p *Permission) (agent.Decision, error) {
	p.answer, p.done = make(chan decided, 1), make(chan struct{})
	defer p.end()
	defer s.waitsForUser()()
	defer s.bus.ask(Event{Kind: KindPermission, Permission: p})()
	select {
	case d := <-p.answer:
		return d.d, s.logDecision(p.Request.CallID, decisionName(d.d), d.from)
	case <-ctx.Done():
		return agent.Reject, ctx.Err()
	}
}

// ask puts a tool's question to the subscribers and takes the first answer.
func (s *Session) ask(ctx context.Context, req agent.QuestionRequest) (card.Answer, error) {
	return s.askQuestion(ctx, NewQuestion(req))
}

func (s *Session) askQuestion(ctx context.Context, q *Question) (card.Answer, error) {
	defer s.waitsForUser()()
	defer s.bus.ask(Event{Kind: KindQuestion, Question: q})()
	a, err := q.wait(ctx)
	if err != nil {
		return a.a, err
	}
	return a.a, s.logDecision(q.Request.CallID, session.DecisionAnswer, a.from)
}

// waitsForUser marks the session as waiting for the user's answer (its
// status says so) until the function it returns is called.
func (s *Session) waitsForUser() func() {
	s.asking.Add(1)
	s.publishStatus()
	return func() {
		s.asking.Add(-1)
		s.publishStatus()
	}
}

// live are the sessions open in this process, for KillAll.
var live = struct {
	sync.Mutex
	m map[*Session]struct{}
}{m: map[*Session]struct{}{}}

func track(s *Session) {
	live.Lock()
	live.m[s] = struct{}{}
	live.Unlock()
}

func untrack(s *Session) {
	live.Lock()
	delete(live.m, s)
	live.Unlock()
}

// KillAll kills every session open in this process, at once: the exit path of a
// second Ctrl-C, SIGHUP or SIGTERM. It returns when their processes are gone.
func KillAll() {
	live.Lock()
	all := make([]*Session, 0, len(live.m))
	for s := range live.m {
		all = append(all, s)
	}
	live.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() { _ = s.Kill() })
	}
	wg.Wait()
}
