// Package chat is dsh's interactive terminal conversation: a Bubble Tea model
// over a live session's ordered event stream. What is finished — messages and
// cards — is printed once above the chat, into the terminal's own scrollback,
// through the same presenters and termui renderers as `dsh replay`; what is
// still moving — the model's text as it streams, a running command's output, a
// permission prompt, the input and a status line — is the view below it.
package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termfold"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// Session is what the chat needs of a live session; *host.Session is one.
type Session interface {
	ID() string
	// Status is the session's facts (model, window, usage, cost, mode …); the
	// chat renders it and keeps no count of its own.
	Status() host.Status
	// Submit hands over what the user typed (host.Session.Submit): the host
	// parses it, runs the command or the turn, and logs it.
	Submit(ctx context.Context, in host.Input) (host.Answer, error)
	// CommandsFor is the session's table of slash commands; Answers says an
	// input is one the host answers at once, not a turn.
	CommandsFor(where host.Where) []host.Command
	Answers(text string, where host.Where) bool
	Cancel()
	Running() bool
	// Models are the models the session may be set to (/model's list);
	// Points the changes /rewind and /diff offer.
	Models() []host.Model
	Points(ctx context.Context) ([]host.Point, error)
	Close() error
}

// Opened is a session the chat shows, with its events from the moment it was
// opened (closed when the session ends).
type Opened struct {
	Session  Session
	Registry *tool.Registry
	Events   <-chan host.Event
	// Joined says the session is live in another dsh process (dsh attach):
	// leaving this chat leaves it running there.
	Joined bool
}

// Replay receives the records of a resumed session's log, in order.
type Replay func(reg *tool.Registry, rec session.Record)

// Config is what the chat is given.
type Config struct {
	Root    string
	Model   string    // the model a new session starts with, for the status line until there is one
	Mode    host.Mode // the mode a new session starts in
	Color   bool
	Width   int // the terminal's width until the first resize message
	Height  int
	History *History
	// Open opens a session: "" a new one, else the one with that id, whose
	// records it hands to replay first.
	Open func(id string, replay Replay) (Opened, error)
	// Sessions lists this directory's sessions, newest first.
	Sessions func() ([]session.Info, error)
	// Files lists the workspace's files for @ completion (nil: walk Root once).
	Files func() []string
	Now   func() time.Time
	// Notify rings the bell and sends a desktop notification (OSC 9) when a
	// turn ends or a prompt waits while the terminal does not have focus.
	Notify bool
	// Print, when set, takes what is printed above the chat instead of the
	// terminal (tests).
	Print func(string)
	// Editor is the command Ctrl-G edits the prompt with ($VISUAL, else
	// $EDITOR; "" is vi).
	Editor string
	// SessionDir holds the sessions' logs, a subagent's too: Ctrl-O reads
	// the last one's to draw its calls in full.
	SessionDir string
}

// Model is the chat's Bubble Tea model.
type Model struct {
	cfg Config
	// builtins are the commands offered while the first session opens; table
	// is the session's (host.Session.CommandsFor).
	builtins, table []host.Command
	// opening says a session is being opened; waiting is what was typed
	// before the first one was open, sent when it is.
	opening bool
	waiting []host.Input
	// typed is the last built-in command the log holds, whose reply follows.
	typed string

	sess   Session
	reg    *tool.Registry
	events <-chan host.Event
	gen    int // which session events belong to; /new and /resume start another
	sb     *scrollback

	width, height int
	input         textarea.Model
	spin          spinner.Model

	running   bool
	queued    string // a prompt typed while a turn ran, sent when it ends
	queuedP   []card.Content
	stream    strings.Builder
	thinking  strings.Builder
	live      map[string]*liveCall
	liveOrder []string
	// held are tool calls not printed yet: a call the user is asked about
	// shows in the box, and goes to the scrollback once answered, so that it
	// is on screen once. Any other record, or the call's output, prints them;
	// a call that started shows live meanwhile (it may go on to ask).
	held     []session.Record
	boxed    string // the held call the box shows
	perm     *host.Permission
	permCard []string  // the rows of the call the box shows
	permAt   time.Time // when perm (or ask) was shown
	ask      *askBox   // a tool's question waiting for the user
	typedAt  time.Time // the last key press
	// accepted says a key went to the box on screen: the rest of the answer
	// is typed, not typed ahead.
	accepted bool
	review   *review // the full-screen view of what the box shows

	status host.Status // the session's, as the host last published it
	// blurred says the terminal reported that it lost focus: what finishes
	// now is notified.
	blurred bool

	notice           string
	lastCtrlC        time.Time
	cancelledByCtrlC bool // the last Ctrl-C cancelled a running turn

	// palette is the / list of commands, open while the input is "/" and the
	// start of a name; paletteShut says Esc closed it until the input is
	// cleared.
	palette     *picker
	paletteShut bool

	// completion of @paths
	comp    []completion
	compSel int
	files   []string
	walking bool // the @ completion's walk of the workspace is running
	// mentions are the session's MCP resources (SERVER:URI) for @
	// completion, nil until listed; listing says the listing runs.
	mentions []string
	listing  bool

	pastes map[int]string
	nPaste int

	histIdx int // -1: not browsing; else the history entry shown
	draft   string

	picker *picker // /resume or /model without an argument

	// The view is drawn again for every message but those that only move
	// what streams (a command's output, the model's text): those redraw it at
	// most every liveFrame, so a flood of output costs a few frames a second,
	// not one per batch, and keystrokes keep their frames.
	lastView tea.View
	viewAt   time.Time
	redraw   bool

	printing  bool
	pending   strings.Builder
	quitting  bool
	exitAfter bool
	// Interrupted reports that the chat was left by a second Ctrl-C while a turn
	// ran or was being cancelled: the caller kills the session's processes at
	// once and exits 130.
	Interrupted bool
}

// liveCall is a running call's output, of which only the tail is kept.
type liveCall struct {
	title   string
	started bool // permitted and running; before that the prompt shows it
	tail    string
}

// tailBytes bounds the output kept per running call.
const tailBytes = 4 << 10

// liveFrame is how often streaming alone redraws the view at most.
const liveFrame = 33 * time.Millisecond

type completion struct{ value, label string }

// Messages.
type (
	eventsMsg struct {
		gen    int
		events []host.Event
		closed bool
	}
	turnDoneMsg struct {
		gen  int
		stop host.StopReason
		err  error
	}
	permDoneMsg struct{ p *host.Permission }
	printedMsg  struct{}
	noticeMsg   struct{ at time.Time }
)

// doublePress is how soon a second Ctrl-C must come to exit.
const doublePress = 2 * time.Second

// New returns the chat on an opened session. The caller has already printed
// a resumed session's history through the same Config.
func New(cfg Config, o Opened) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Model{cfg: cfg, builtins: host.Builtins(host.Terminal), width: cfg.Width, height: cfg.Height, histIdx: -1, pastes: map[int]string{}, redraw: true}
	if m.width <= 0 {
		m.width = 80
	}
	if m.height <= 0 {
		m.height = 24
	}
	in := textarea.New()
	in.Prompt = ""
	in.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	in.ShowLineNumbers = false
	in.Placeholder = "Ask dsh, /help for commands, @ to attach a file"
	in.DynamicHeight = true
	in.MinHeight = 1
	in.MaxHeight = 10
	in.CharLimit = 0
	in.KeyMap.InsertNewline.SetKeys("shift+enter", "ctrl+j", "alt+enter")
	if cfg.Color {
		in.SetStyles(colorTextareaStyles())
	} else {
		in.SetStyles(plainTextareaStyles())
	}
	in.SetWidth(m.width)
	in.Focus()
	m.input = in
	m.spin = spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m.sb = newScrollback(o.Registry, m.termOpts(), m.warn)
	m.sb.childDir(m.cfg.SessionDir)
	m.attach(o)
	return m
}

func colorTextareaStyles() textarea.Styles {
	st := textarea.DefaultDarkStyles()
	st.Cursor.Blink = false
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.Base = lipgloss.NewStyle()
	return st
}

func plainTextareaStyles() textarea.Styles {
	var s textarea.Styles
	s.Cursor.Blink = false
	s.Focused.Placeholder = lipgloss.NewStyle()
	s.Blurred.Placeholder = lipgloss.NewStyle()
	return s
}

func (m *Model) termOpts() termui.Options {
	return termui.Options{Color: m.cfg.Color, Width: m.width, Root: m.cfg.Root}
}

// attach makes o the session shown.
func (m *Model) attach(o Opened) {
	m.gen++
	m.sess, m.events = o.Session, o.Events
	m.table, m.status = nil, host.Status{}
	if o.Session != nil {
		m.table, m.status = o.Session.CommandsFor(host.Terminal), o.Session.Status()
	}
	m.boxed = ""
	m.release("") // the last session's, with its registry
	m.useRegistry(o.Registry)
	m.running, m.perm, m.permCard, m.ask, m.review = false, nil, nil, nil, nil
	m.live, m.liveOrder = map[string]*liveCall{}, nil
	m.mentions, m.listing = nil, false // another session, other servers
	m.stream.Reset()
	m.thinking.Reset()
}

// useRegistry presents records with reg from now on (a session's own tools).
func (m *Model) useRegistry(reg *tool.Registry) {
	if m.sb != nil && m.reg == reg {
		return
	}
	m.reg = reg
	if m.sb == nil {
		m.sb = newScrollback(reg, m.termOpts(), m.warn)
		m.sb.childDir(m.cfg.SessionDir)
		return
	}
	m.sb.present(reg)
}

func (m *Model) warn(s string) { m.sb.note("dsh: " + s) }

// Init starts reading the session's events.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.waitEvents(), m.flush(), m.openNew())
}

// TakeBacklog returns what is to be printed before the chat starts (a
// resumed session's history), for the caller to write to the terminal before
// the program runs: Bubble Tea's renderer does not know where the cursor is
// until it has drawn its first frame, and a print before that scrolls the
// terminal's screen away.
func (m *Model) TakeBacklog() string {
	if t := m.sb.take(); t != "" {
		if m.pending.Len() > 0 {
			m.pending.WriteByte('\n')
		}
		m.pending.WriteString(t)
	}
	if m.pending.Len() == 0 {
		return ""
	}
	s := m.pending.String() + "\n"
	m.pending.Reset()
	return s
}

// maxBatch is how many queued events one message carries, so a flood of
// output costs one update and one frame per batch, not per chunk.
const maxBatch = 512

func (m *Model) waitEvents() tea.Cmd {
	ch, gen := m.events, m.gen
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		e, ok := <-ch
		if !ok {
			return eventsMsg{gen: gen, closed: true}
		}
		batch := []host.Event{e}
		for len(batch) < maxBatch {
			select {
			case e, ok := <-ch:
				if !ok {
					return eventsMsg{gen: gen, events: batch, closed: true}
				}
				batch = append(batch, e)
				if e.Kind == host.KindPermission || e.Kind == host.KindQuestion {
					return eventsMsg{gen: gen, events: batch}
				}
			default:
				return eventsMsg{gen: gen, events: batch}
			}
		}
		return eventsMsg{gen: gen, events: batch}
	}
}

// flush prints what the scrollback has, in order: one print is in flight at a
// time, and the next starts when it is done.
func (m *Model) flush() tea.Cmd {
	if t := m.sb.take(); t != "" {
		if m.pending.Len() > 0 {
			m.pending.WriteByte('\n')
		}
		m.pending.WriteString(t)
	}
	if m.cfg.Print != nil {
		if m.pending.Len() > 0 {
			m.cfg.Print(m.pending.String())
			m.pending.Reset()
		}
		if m.exitAfter {
			return tea.Quit
		}
		return nil
	}
	if m.printing || m.review != nil { // nothing is printed over the review's screen
		return nil
	}
	if m.pending.Len() == 0 {
		if m.exitAfter {
			return tea.Quit
		}
		return nil
	}
	text := m.pending.String()
	m.pending.Reset()
	m.printing = true
	var cmds []tea.Cmd
	for _, c := range printChunks(text, m.width, printRoom(m.height)) {
		cmds = append(cmds, tea.Println(c))
	}
	return tea.Sequence(append(cmds, func() tea.Msg { return printedMsg{} })...)
}

// Bubble Tea's inline renderer prints above the view by scrolling the screen
// by the printed text's rows and then moving up over them and the view: when
// the two together are taller than the screen the move up stops at the top,
// and the view's old frame is pushed into the scrollback, followed by blank
// lines, while the text is written over itself (the frozen input and status
// line, the lost messages). So the view leaves printRoom rows free, and what
// is printed goes in chunks of at most that many rows.

// printRoom is how many of a screen's rows the view leaves to what is printed.
func printRoom(height int) int { return max(height/4, 3) }

// viewRows is the most rows the view takes on a screen height rows tall.
func viewRows(height int) int { return max(height-printRoom(height), 3) }

// printChunks cuts text into pieces of at most room rows on a screen width
// columns wide, counting a line wider than the screen as the renderer does.
func printChunks(text string, width, room int) []string {
	lines := strings.Split(text, "\n")
	var chunks []string
	start, rows := 0, 0
	for i, l := range lines {
		n := 1
		if w := ansi.StringWidth(l); width > 0 && w > width {
			n += w / width
		}
		if rows+n > room && i > start {
			chunks = append(chunks, strings.Join(lines[start:i], "\n"))
			start, rows = i, 0
		}
		rows += n
	}
	return append(chunks, strings.Join(lines[start:], "\n"))
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	m.redraw = m.redraw || !streamingOnly(msg)
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 5)
		m.input.SetWidth(m.width)
		m.sb.resize(m.width)
		if m.perm != nil {
			m.setApproval()
		}
		if m.ask != nil {
			m.ask.card = m.askCard(m.ask.q)
		}
	case eventsMsg:
		if msg.gen != m.gen {
			return m, nil
		}
		for _, e := range msg.events {
			cmds = append(cmds, m.event(e))
		}
		if !msg.closed {
			cmds = append(cmds, m.waitEvents())
		}
	case turnDoneMsg:
		if msg.gen == m.gen {
			cmds = append(cmds, m.turnDone(msg))
		}
	case submittedMsg:
		if msg.gen == m.gen {
			cmds = append(cmds, m.submitted(msg))
		}
	case sessionsMsg:
		m.listed(msg)
	case modelsMsg:
		if len(msg) > 0 && m.picker == nil {
			m.picker = m.modelPicker(msg)
		}
	case pointsMsg:
		cmds = append(cmds, m.diffPicker(msg))
	case expandedMsg:
		m.sb.adopt(msg.sb)
	case editingMsg:
		cmds = append(cmds, m.runEditor(msg))
	case editedMsg:
		if msg.err != nil {
			m.sb.note("the prompt was not changed: " + msg.err.Error())
		} else {
			m.input.SetValue(msg.text)
		}
	case permDoneMsg:
		if m.perm == msg.p {
			m.perm, m.permCard, m.review = nil, nil, nil
			m.unbox()
		}
	case askDoneMsg:
		if m.ask != nil && m.ask.q == msg.q {
			m.ask = nil
			m.unbox()
		}
	case printedMsg:
		m.printing = false
	case noticeMsg:
		if m.cfg.Now().Sub(msg.at) >= doublePress {
			m.notice = ""
		}
	case spinner.TickMsg:
		if m.busy() {
			var c tea.Cmd
			m.spin, c = m.spin.Update(msg)
			cmds = append(cmds, c)
		}
	case openedMsg:
		cmds = append(cmds, m.opened(msg))
	case filesMsg:
		m.files, m.walking = msg.files, false
		m.updateCompletion()
	case resourcesMsg:
		m.mentionsListed(msg)
	case NoteMsg:
		m.sb.note("dsh: " + string(msg))
	case tea.FocusMsg:
		m.blurred = false
	case tea.BlurMsg:
		m.blurred = true
	case tea.PasteMsg:
		m.paste(msg.Content)
	case tea.KeyPressMsg:
		cmds = append(cmds, m.key(msg))
	}
	cmds = append(cmds, m.flush())
	return m, tea.Batch(cmds...)
}

// busy says the spinner turns: a turn the chat started, or one the host says runs.
func (m *Model) busy() bool { return m.running || m.status.State == host.StateWorking }

// streamingOnly says msg only brings more of what streams: output of a
// running command or the model's text.
func streamingOnly(msg tea.Msg) bool {
	em, ok := msg.(eventsMsg)
	if !ok || em.closed {
		return false
	}
	for _, e := range em.events {
		switch {
		case e.Kind == host.KindDelta:
		case e.Kind == host.KindRecord && e.Record.Type == session.TypeProgress:
		default:
			return false
		}
	}
	return true
}

// event folds one event of the session into the view.
func (m *Model) event(e host.Event) tea.Cmd {
	switch e.Kind {
	case host.KindRecord:
		m.record(e.Record)
	case host.KindDelta:
		switch e.Delta.Type {
		case provider.DeltaText:
			m.stream.WriteString(e.Delta.Text)
		case provider.DeltaThinking:
			m.thinking.WriteString(e.Delta.Text)
		}
	case host.KindModelRequest:
		m.stream.Reset()
		m.thinking.Reset()
	case host.KindCallStarted:
		if lc := m.live[e.CallID]; lc != nil {
			lc.started = true
		}
	case host.KindPermission:
		if e.Permission.Parent == "" && !e.Permission.Unlogged {
			m.hold(e.Permission.Request.CallID)
		}
		m.perm, m.permAt, m.accepted = e.Permission, m.cfg.Now(), false
		m.setApproval()
		p := e.Permission
		return tea.Batch(m.notify("dsh: "+toolName(p.Request.Tool)+" waits for your answer"),
			func() tea.Msg { <-p.Done(); return permDoneMsg{p} })
	case host.KindQuestion:
		return m.showQuestion(e.Question)
	case host.KindStatus:
		ticking := m.busy()
		if e.Status.MCPListed != m.status.MCPListed { // a server changed its prompts or resources
			m.table, m.mentions = m.sess.CommandsFor(host.Terminal), nil
		}
		m.status = e.Status
		if !ticking && m.busy() {
			return m.spin.Tick
		}
	case host.KindChild:
		if e.Child.Event.Kind == host.KindRecord {
			m.release("")
		}
		m.child(e.Child)
	case host.KindNotice:
		m.sb.note(e.Text)
	case host.KindUsage:
	}
	return nil
}

// output keeps the end of a running call's output.
func (lc *liveCall) output(c string) {
	// Only the end is kept: a chunk as long as the tail replaces it, and
	// the tail is cut before it is joined, so a flood copies little.
	if len(c) >= tailBytes {
		lc.tail = c[len(c)-tailBytes:]
	} else {
		lc.tail = lc.tail[max(0, len(lc.tail)+len(c)-tailBytes):] + c
	}
}

// child follows a subagent's event: its running calls show live, indented
// after its task's, and each finished one is a line under the task in the
// scrollback (Ctrl-O draws them in full).
func (m *Model) child(c *host.Child) {
	switch c.Event.Kind {
	case host.KindCallStarted:
		if lc := m.live[c.Call+"/"+c.Event.CallID]; lc != nil {
			lc.started = true
		}
	case host.KindRecord:
		rec := c.Event.Record
		id := c.Call + "/" + rec.CallID
		switch rec.Type {
		case session.TypeToolCall:
			at := len(m.liveOrder)
			for i, o := range m.liveOrder {
				if o == c.Call || strings.HasPrefix(o, c.Call+"/") {
					at = i + 1
				}
			}
			m.liveOrder = slices.Insert(m.liveOrder, at, id)
			cc, _ := view.CallCard(m.reg, rec)
			m.live[id] = &liveCall{title: "│ " + termfold.CallTitle(cc)}
		case session.TypeProgress:
			if lc := m.live[id]; lc != nil {
				lc.output(rec.Chunk)
			}
		case session.TypeToolResult:
			m.endLive(id)
		case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypePlan,
			session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
			session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeDamaged, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		}
		m.sb.child(c)
	case host.KindDelta, host.KindModelRequest, host.KindPermission, host.KindUsage, host.KindStatus, host.KindQuestion, host.KindChild,
		host.KindNotice:
	}
}

// endLive forgets a finished call.
func (m *Model) endLive(id string) {
	delete(m.live, id)
	if i := slices.Index(m.liveOrder, id); i >= 0 {
		m.liveOrder = slices.Delete(m.liveOrder, i, i+1)
	}
}

func (m *Model) record(rec session.Record) {
	switch rec.Type {
	case session.TypeProgress:
		m.release(rec.CallID)
		if lc := m.live[rec.CallID]; lc != nil {
			lc.output(rec.Chunk)
		}
		return
	case session.TypeAssistant:
		m.stream.Reset()
	case session.TypeThinking:
		m.thinking.Reset()
	case session.TypeToolCall:
		if m.live[rec.CallID] == nil {
			m.liveOrder = append(m.liveOrder, rec.CallID)
		}
		cc, _ := view.CallCard(m.reg, rec)
		m.live[rec.CallID] = &liveCall{title: termfold.CallTitle(cc)}
		m.held = append(m.held, rec)
		return
	case session.TypeToolResult:
		m.endLive(rec.CallID)
	case session.TypeHeader, session.TypeUser, session.TypeTurnEnd, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeDamaged,
		session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook,
		session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
	}
	m.release("")
	m.sb.record(rec)
	// /help's answer is the host's list of commands; the keys are the chat's.
	if rec.Type == session.TypeCommand {
		m.typed = rec.Text
	} else if rec.Type == session.TypeReply && rec.SignIn == nil && m.typed == "/help" {
		m.sb.note(keysHelp)
	}
}

// release prints the held calls up to the one with id upTo and that one, or
// all of them ("" or a call not held); a call the box shows stays held until
// it is answered.
func (m *Model) release(upTo string) {
	n := len(m.held)
	if i := slices.IndexFunc(m.held, func(r session.Record) bool { return r.CallID == upTo }); i >= 0 {
		n = i + 1
	}
	if m.boxed != "" && m.boxed != upTo {
		if i := slices.IndexFunc(m.held, func(r session.Record) bool { return r.CallID == m.boxed }); i >= 0 {
			n = min(n, i)
		}
	}
	for _, rec := range m.held[:n] {
		m.sb.record(rec)
	}
	m.held = slices.Delete(m.held, 0, n)
}

// hold keeps the call id out of the scrollback while the box shows it, and
// prints the calls before it. It says whether the call was held (not printed
// yet): the box then shows its card in full.
func (m *Model) hold(id string) bool {
	i := slices.IndexFunc(m.held, func(r session.Record) bool { return r.CallID == id })
	if i < 0 || id == "" {
		return false
	}
	for _, rec := range m.held[:i] {
		m.sb.record(rec)
	}
	m.held = slices.Delete(m.held, 0, i)
	m.boxed = id
	return true
}

// unbox prints the call the box showed, now answered.
func (m *Model) unbox() {
	id := m.boxed
	m.boxed = ""
	if id != "" {
		m.release(id)
	}
}

func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.running = false
	m.boxed = ""
	m.release("")
	m.stream.Reset()
	m.thinking.Reset()
	m.live, m.liveOrder = map[string]*liveCall{}, nil
	if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
		m.sb.note("error: " + msg.err.Error())
	}
	if msg.stop == host.StopCancelled {
		m.notice = ""
	}
	ring := m.notify("dsh: " + termfold.StopWords(string(msg.stop)))
	if q := m.queued; q != "" && msg.stop != host.StopCancelled {
		p := m.queuedP
		m.queued, m.queuedP = "", nil
		return m.submitInput(q, p) // the turn goes on: nothing to tell yet
	}
	return ring
}

// notify tells a user who is elsewhere that the chat needs them: the bell, and
// OSC 9, which terminals that know it show as a desktop notification. Only a
// terminal that reported losing focus is notified.
func (m *Model) notify(text string) tea.Cmd {
	if !m.cfg.Notify || !m.blurred {
		return nil
	}
	return tea.Raw("\a" + ansi.Notify(termui.Sanitize(text)))
}

func (m *Model) setNotice(s string) tea.Cmd {
	m.notice = s
	at := m.cfg.Now()
	return tea.Tick(doublePress, func(time.Time) tea.Msg { return noticeMsg{at} })
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	if ks == "ctrl+c" {
		return m.interrupt()
	}
	if m.review != nil && (m.reviewKey(ks) || m.perm == nil && m.ask == nil) {
		return nil // a review of its own (/diff) takes every key
	}
	if deliberate := m.deliberate(); m.perm != nil && deliberate {
		return m.permKey(ks)
	} else if m.ask != nil && deliberate {
		return m.askKey(k)
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	if m.palette != nil {
		if c, ok := m.paletteKey(ks); ok {
			return c
		}
	}
	switch ks {
	case "esc":
		switch {
		case m.comp != nil:
			m.comp = nil
		case m.running:
			m.sess.Cancel()
			m.queued = ""
			return m.setNotice("cancelling the turn…")
		}
		return nil
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.exit()
		}
	case "ctrl+o":
		return m.expand()
	case "ctrl+s": // the sessions, as /resume offers them
		return m.pick()
	case "alt+p": // the models, as /model offers them
		return m.pickModel()
	case "ctrl+g":
		return m.editPrompt()
	case "ctrl+l":
		m.redraw = true
		return tea.ClearScreen // the view drawn again, whatever the terminal did to it
	case "tab":
		if m.comp != nil {
			m.complete()
			return nil
		}
	case "up", "down":
		if m.comp != nil {
			n := len(m.comp)
			if ks == "up" {
				m.compSel = (m.compSel + n - 1) % n
			} else {
				m.compSel = (m.compSel + 1) % n
			}
			return nil
		}
		if m.historyKey(ks) {
			return nil
		}
	case "enter":
		return m.submit()
	}
	var c tea.Cmd
	m.input, c = m.input.Update(k)
	m.histIdx = -1
	return tea.Batch(c, m.updateCompletion())
}

// interrupt is Ctrl-C: the first cancels the running turn (or clears the input),
// a second within doublePress exits.
func (m *Model) interrupt() tea.Cmd {
	now := m.cfg.Now()
	if !m.lastCtrlC.IsZero() && now.Sub(m.lastCtrlC) < doublePress {
		// The turn the first press cancelled may still be ending: kill it.
		m.Interrupted = m.running || m.cancelledByCtrlC
		return m.exit()
	}
	m.lastCtrlC, m.cancelledByCtrlC = now, m.running
	if m.perm != nil {
		m.perm.Answer(host.Reject)
	}
	if m.ask != nil {
		m.answer(card.Answer{})
	}
	if m.running {
		m.sess.Cancel()
		m.queued = ""
		return m.setNotice("cancelling the turn… (Ctrl-C again to exit)")
	}
	m.input.Reset()
	m.comp, m.palette, m.paletteShut = nil, nil, false
	m.picker = nil
	return m.setNotice("press Ctrl-C again to exit")
}

func (m *Model) exit() tea.Cmd {
	m.quitting = true
	m.exitAfter = true
	return nil // flush quits once everything is printed
}

// permKey answers the pending permission with one key.
func (m *Model) permKey(ks string) tea.Cmd {
	p := m.perm
	switch ks {
	case "y", "Y":
		p.Answer(host.AllowOnce)
	case "a", "A":
		if !canRemember(p) {
			return nil
		}
		p.Answer(host.AllowAlways)
	case "n", "N", "esc":
		p.Answer(host.Reject)
	case "e", "E":
		m.openReview("Allow "+toolName(p.Request.Tool)+"?", bodyLines(renderApproval(p.Request.Card, m.reviewOpts())))
		return nil
	default:
		return nil
	}
	m.perm, m.permCard, m.review = nil, nil, nil
	m.unbox()
	return nil
}

func canRemember(p *host.Permission) bool {
	ap := p.Request.Approval
	return ap.Remember && len(ap.Keys) > 0
}

func (m *Model) historyKey(ks string) bool {
	h := m.cfg.History
	if h.Len() == 0 {
		return false
	}
	switch {
	case ks == "up" && m.input.Line() == 0:
		if m.histIdx == -1 {
			m.draft = m.input.Value()
			m.histIdx = h.Len()
		}
		if m.histIdx == 0 {
			return true
		}
		m.histIdx--
		m.input.SetValue(h.At(m.histIdx))
		return true
	case ks == "down" && m.histIdx >= 0 && m.input.Line() == m.input.LineCount()-1:
		m.histIdx++
		if m.histIdx >= h.Len() {
			m.histIdx = -1
			m.input.SetValue(m.draft)
			return true
		}
		m.input.SetValue(h.At(m.histIdx))
		return true
	}
	return false
}

func (m *Model) paste(text string) {
	// Terminals paste line ends as CR (tmux, iTerm) or CRLF.
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	if ref, ok := imageRef(m.cfg.Root, text); ok {
		m.input.InsertString(ref + " ")
		return
	}
	if strings.Count(text, "\n") < pasteLines && len(text) <= pasteBytes {
		m.input.InsertString(text)
		return
	}
	m.nPaste++
	m.pastes[m.nPaste] = text
	m.input.InsertString(attach.Placeholder(m.nPaste, text))
}

// submit sends the input: a slash command, or a prompt.
func (m *Model) submit() tea.Cmd {
	if m.comp != nil && m.compSel < len(m.comp) {
		m.complete()
		return nil
	}
	m.palette, m.paletteShut = nil, false
	raw := m.input.Value()
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	m.input.Reset()
	m.histIdx = -1
	if err := m.cfg.History.Add(raw); err != nil {
		m.sb.note("dsh: " + err.Error())
	}
	text, pastes := attach.Pastes(raw, m.pastes)
	m.pastes, m.nPaste = map[int]string{}, 0
	if strings.TrimSpace(text) == "/diff" && m.sess != nil {
		return m.listPoints() // a picker: the session's diff, or one change's
	}
	return m.submitInput(text, pastes)
}

// updateCompletion opens the / palette while the first word is typed and
// offers @paths for the word being typed. The first @ starts the walk of the
// workspace, in a command; its files are offered when it is done.
func (m *Model) updateCompletion() tea.Cmd {
	m.comp, m.compSel = nil, 0
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") {
		m.paletteShut = false
	}
	if strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \n") {
		m.updatePalette(v)
		return nil
	}
	m.palette = nil
	i := strings.LastIndexAny(v, " \n\t")
	word := v[i+1:]
	if !strings.HasPrefix(word, "@") {
		return nil
	}
	list := m.listResources()
	if m.files == nil {
		if m.walking {
			return list
		}
		m.walking = true
		return tea.Batch(m.walkFiles(), list)
	}
	// With nothing typed after the @, the session's MCP resources come
	// first: they are few, the files many.
	for _, f := range matchFiles(append(slices.Clip(m.mentions), m.files...), word[1:], 6) {
		m.comp = append(m.comp, completion{"@" + f, "@" + f})
	}
	return list
}

// complete puts the selected completion in place of the word being typed.
func (m *Model) complete() {
	if m.comp == nil {
		return
	}
	v := m.input.Value()
	i := strings.LastIndexAny(v, " \n\t")
	m.input.SetValue(v[:i+1] + m.comp[m.compSel].value + " ")
	m.comp = nil
}

// View draws what is still moving.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	if m.review != nil {
		return m.reviewView()
	}
	now := m.cfg.Now()
	if !m.redraw && now.Sub(m.viewAt) < liveFrame {
		return m.lastView
	}
	m.lastView, m.viewAt, m.redraw = m.view(), now, false
	return m.lastView
}

func (m *Model) view() tea.View {
	var b strings.Builder
	b.WriteByte('\n') // apart from what was printed above
	w := m.width
	dim := m.style(lipgloss.NewStyle().Faint(true))
	if t := m.thinking.String(); t != "" {
		b.WriteString(m.tailLines(m.renderWith(func(r *termui.Renderer) error { return r.Thinking(t) }), 6))
	}
	if t := m.stream.String(); t != "" {
		b.WriteString(m.tailLines(m.renderWith(func(r *termui.Renderer) error { return r.Assistant(t) }), max(m.height-8, 4)))
	}
	for _, id := range m.liveOrder {
		lc := m.live[id]
		if lc == nil || !lc.started || id == m.boxed {
			continue
		}
		// The tool samples a fast command's output, so only its latest lines
		// are shown, not a count.
		b.WriteString(wrapText(m.spin.View()+" "+lc.title, w))
		b.WriteByte('\n')
		for _, l := range lastLines(lc.tail, 4) {
			b.WriteString(dim.Render(wrapText("  "+termui.Sanitize(l), w)))
			b.WriteByte('\n')
		}
	}
	switch {
	case m.perm != nil:
		b.WriteString(m.permView())
	case m.ask != nil:
		b.WriteString(m.askView())
	case m.picker != nil:
		b.WriteString(m.pickerView(m.picker))
	}
	if m.notice != "" {
		b.WriteString(dim.Render(wrapText(m.notice, w)))
		b.WriteByte('\n')
	}
	b.WriteString(m.input.View())
	b.WriteByte('\n')
	if m.palette != nil {
		b.WriteString(m.pickerView(m.palette))
	}
	for i, c := range m.comp {
		line := "  " + c.label
		if i == m.compSel {
			line = "› " + c.label
			b.WriteString(m.style(lipgloss.NewStyle().Bold(true)).Render(wrapText(line, w)))
		} else {
			b.WriteString(dim.Render(wrapText(line, w)))
		}
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine())
	v := tea.NewView(fitRows(b.String(), viewRows(m.height)))
	v.ReportFocus = m.cfg.Notify
	return v
}

// fitRows keeps the last n rows of a view, its input and status line, and the
// blank line that sets it apart from what was printed.
func fitRows(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return "\n" + strings.Join(lines[len(lines)-n+1:], "\n")
}

func (m *Model) style(s lipgloss.Style) lipgloss.Style {
	if !m.cfg.Color {
		return lipgloss.NewStyle()
	}
	return s
}

func (m *Model) renderWith(f func(r *termui.Renderer) error) string {
	var b strings.Builder
	if err := f(termui.New(&b, m.termOpts())); err != nil {
		return ""
	}
	return b.String()
}

// tailLines keeps the last n lines of s, so the view never outgrows the screen.
func (m *Model) tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n") + "\n"
}

func lastLines(s string, n int) []string {
	s = strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if j := strings.LastIndexByte(l, '\r'); j >= 0 { // a progress bar redraws its line
			lines[i] = l[j+1:]
		}
	}
	return lines
}

// wrapText wraps to w columns, breaking long words; nothing is cut.
func wrapText(s string, w int) string {
	return ansi.Wrap(s, max(w, 1), "")
}

func (m *Model) permView() string {
	keys := m.permChoices()
	return m.box("Allow "+toolName(m.perm.Request.Tool)+"?", m.permCard, keys, m.boxRows(keys))
}

// permChoices are the keys that answer the pending permission.
func (m *Model) permChoices() string {
	choices := "[y] yes, once"
	if canRemember(m.perm) {
		choices += "  [a] always allow " + m.perm.Request.Approval.Label
	}
	return choices + "  [n] no  [e] review"
}

func toolName(s string) string {
	if s == "" {
		return "this call"
	}
	return s
}

func (m *Model) statusLine() string {
	var parts []string
	// What the session does is the host's to say: a job_output waiting for
	// its job is working, an approval or a question (a subagent's too) waiting.
	switch m.status.State {
	case host.StateWaiting:
		parts = append(parts, "waiting for you")
	case host.StateWorking:
		parts = append(parts, m.spin.View()+" working (Esc to cancel)")
	case host.StateIdle, "":
		parts = append(parts, "idle")
	}
	if m.sess == nil {
		if m.cfg.Model != "" {
			parts = append(parts, m.cfg.Model)
		}
		parts = append(parts, string(m.cfg.Mode), "new session")
	} else {
		st := m.status
		if st.Model != "" {
			parts = append(parts, st.Model)
		}
		parts = append(parts, string(st.Mode))
		ctx := tokens(st.ContextTokens)
		if st.Window > 0 {
			ctx += fmt.Sprintf("/%s (%d%%)", tokens(st.Window), st.ContextTokens*100/st.Window)
		}
		parts = append(parts, "context "+ctx)
		// The id is what matters least: it goes where the line has no room.
		if id := m.sess.ID(); ansi.StringWidth(strings.Join(parts, " · ")+" · "+id) <= m.width {
			parts = append(parts, id)
		}
	}
	ours := m.style(lipgloss.NewStyle().Faint(true)).Render(wrapText(strings.Join(parts, " · "), m.width))
	if m.sess != nil && m.status.Line != "" {
		return userLine(m.status.Line, m.width) + "\n" + ours // Claude Code's statusLine, over dsh's
	}
	return ours
}

// userLine is a line the user's own command printed (Claude Code's status
// line) made fit for the screen: its colours (SGR) kept, as there, every
// other escape sequence and control character dropped, cut at width, and the
// colours reset after it.
func userLine(s string, width int) string {
	var b strings.Builder
	var state byte
	w := 0
	for len(s) > 0 {
		seq, sw, n, next := ansi.DecodeSequence(s, state, nil)
		state, s = next, s[n:]
		switch {
		case sw > 0:
			if w += sw; w > width {
				s = ""
				continue
			}
			b.WriteString(seq)
		case len(seq) >= 3 && strings.HasPrefix(seq, "\x1b[") && seq[len(seq)-1] == 'm' && strings.Trim(seq[2:len(seq)-1], "0123456789;:") == "":
			b.WriteString(seq)
		}
	}
	return b.String() + "\x1b[0m"
}

// tokens spells a token count briefly: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
