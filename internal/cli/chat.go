package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"

	"github.com/dsh-dev/dsh/internal/chat"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/settings"
)

// sessionFlags are the flags of every command that opens an agent session.
type sessionFlags struct {
	settingsFlags
	Color    colorMode
	Continue bool
	Resume   string
}

func (o *sessionFlags) register(fs *flag.FlagSet) {
	o.Color = "auto"
	o.settingsFlags.register(fs)
	fs.Var(&o.Color, "color", "colour output `WHEN`: auto, always or never (auto honours NO_COLOR)")
	fs.BoolVar(&o.Continue, "continue", false, "go on with the newest session of this directory")
	fs.BoolVar(&o.Continue, "c", false, "short for --continue")
}

// opener opens the sessions of one directory with one set of settings.
type opener struct {
	io IO
	o  sessionFlags
	st settings.Settings
	// note, when set, tells the user instead of stderr (the chat's
	// scrollback while it runs).
	note *chatNotes
	// discardEmpty: a new session left without a word leaves no log (the
	// chat opens one as it starts).
	discardEmpty bool
	// maxTurns and maxCost bound each prompt (dsh run's limits).
	maxTurns int
	maxCost  float64
	// statusLine: the session runs Claude Code's statusLine, which the
	// chat and the web page show.
	statusLine bool
}

func (op *opener) options() host.Options {
	o := op.st.Options()
	o.Ask, o.Now, o.Warn, o.DiscardEmpty, o.Client = true, op.io.Now, warner(op.io), op.discardEmpty, "terminal"
	o.MaxTurns, o.MaxCost = op.maxTurns, op.maxCost
	if op.statusLine {
		o.StatusLine = op.st.StatusLine()
	}
	if op.note != nil {
		o.Warn = op.note.tell
	}
	return o
}

// chatNotes puts the host's warnings and MCP notices in the chat while it
// runs, where stderr would write across its view, and on stderr before and
// after.
type chatNotes struct {
	mu   sync.Mutex
	p    *tea.Program // nil while the chat does not run
	warn func(string)
}

func (n *chatNotes) tell(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil {
		n.warn(msg)
		return
	}
	go n.p.Send(chat.NoteMsg(msg)) // Send waits for the loop, which may be what warns
}

func (n *chatNotes) run(p *tea.Program) {
	n.mu.Lock()
	n.p = p
	n.mu.Unlock()
}

// sessions lists this directory's sessions, newest first.
func (op *opener) sessions() ([]session.Info, error) {
	return host.ListSessions(op.st.SessionDir, op.io.Cwd)
}

// target is the id a command line asks to reopen: --resume ID, or the newest
// session of this directory for --continue; "" for a new session.
func (op *opener) target() (string, error) {
	if op.o.Resume != "" {
		return op.o.Resume, nil
	}
	if !op.o.Continue {
		return "", nil
	}
	infos, err := op.sessions()
	if err != nil {
		return "", err
	}
	if len(infos) == 0 {
		return "", fmt.Errorf("no earlier session in %s to continue; start one with dsh", op.io.Cwd)
	}
	return infos[0].ID, nil
}

// open creates ("" id) or reloads a session; replay, if not nil, gets the
// reloaded log's records.
func (op *opener) open(id string, replay func(*host.Session, session.Record) error) (*host.Session, error) {
	if id == "" {
		return host.Create(op.options())
	}
	path, err := session.Resolve(op.st.SessionDir, id)
	if err != nil {
		return nil, err
	}
	return host.Load(op.options(), path, replay)
}

// events subscribes to s and delivers its events on a channel, closed when the
// session ends. The subscriber blocks while the chat is behind, which makes
// the host queue (and, past its bound, drop progress) rather than the chat.
func events(s *host.Session, done <-chan struct{}) <-chan host.Event {
	ch := make(chan host.Event, 64)
	sub := s.Subscribe(func(e host.Event) {
		select {
		case ch <- e:
		case <-done:
		}
	})
	go func() {
		<-sub.Done()
		close(ch)
	}()
	return ch
}

const chatSummary = `With no command, dsh opens a conversation in the current directory: type a
prompt, follow the model's work as cards, answer permission prompts with one
key, and go on with the next prompt. /help lists the slash commands.

Keys: Enter sends, Shift+Enter or Ctrl-J starts a new line, ↑/↓ walk this
directory's prompt history, @path attaches a file (Tab completes it), Esc or
Ctrl-C cancels the running turn, a second Ctrl-C within 2 s exits.

dsh -c (--continue) goes on with this directory's newest session, dsh --resume ID
with a given one (dsh --resume alone offers a list): the earlier conversation is
shown and the model has it. The chat needs a terminal; for scripts use dsh run.`

// splitResume takes --resume [ID] out of args: the flag package has no optional
// values. pick says --resume came without an id.
func splitResume(args []string) (rest []string, id string, pick bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(rest, args[i:]...), id, pick
		case a == "--resume" || a == "-resume":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				id = args[i+1]
				i++
			} else {
				pick = true
			}
		case strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "-resume="):
			_, id, _ = strings.Cut(a, "=")
		default:
			rest = append(rest, a)
		}
	}
	return rest, id, pick
}

func runChatCmd(ctx context.Context, io IO, args []string) error {
	var o sessionFlags
	fs := newFlags(io, "", "[-c | --resume [ID]]", chatSummary)
	fs.Usage = func() { usage(fs.Output()) }
	o.register(fs)
	args, resume, pick := splitResume(args)
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "unexpected %q: to run one prompt, use dsh run %q", fs.Arg(0), fs.Arg(0))
	}
	o.Resume = resume
	if !io.OutIsTerminal || !io.InIsTerminal {
		fmt.Fprintln(io.Err, `dsh: the chat needs a terminal. To run one prompt from a script, use: dsh run "PROMPT" (see dsh run --help)`)
		return errUsage
	}
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	if st, err = askTrust(ctx, io, o.settingsFlags, st); err != nil {
		return settingsErr(io, fs, err)
	}
	return runChat(ctx, io, &opener{io: io, o: o, st: st, statusLine: true}, pick)
}

// chatGCPercent keeps the chat's heap close to what it holds (mostly the model
// context): it waits on a person most of the time, so collecting more often
// costs little, and the process stays small over a long session.
const chatGCPercent = 50

// chatFPS bounds how often the chat redraws: a keystroke shows within a frame.
const chatFPS = 120

func runChat(ctx context.Context, io IO, op *opener, pick bool) error {
	if io.Getenv("GOGC") == "" {
		debug.SetGCPercent(chatGCPercent)
	}
	id, err := op.target()
	if err != nil {
		return err
	}
	op.note = &chatNotes{warn: warner(io)}
	op.discardEmpty = true
	model := op.options().Model
	hist, herr := chat.LoadHistory(chat.HistoryPath(io.Cwd, io.Getenv))
	done := make(chan struct{})
	defer close(done)

	var current *host.Session
	cfg := chat.Config{
		Root: io.Cwd, Model: model, Mode: op.st.Mode,
		Color: op.o.Color.enabled(io), Width: io.width(), Height: io.Height,
		History:  hist,
		Sessions: op.sessions, Now: io.Now, Notify: op.st.Notify(),
		SessionDir: op.st.SessionDir, Editor: cmp.Or(io.Getenv("VISUAL"), io.Getenv("EDITOR")),
	}
	cfg.Open = func(id string, replay chat.Replay) (chat.Opened, error) {
		s, err := op.open(id, func(s *host.Session, r session.Record) error {
			replay(s.Registry(), r)
			return nil
		})
		if err != nil {
			return chat.Opened{}, err
		}
		current = s
		return chat.Opened{Session: s, Registry: s.Registry(), Events: events(s, done)}, nil
	}
	m := chat.New(cfg, chat.Opened{})
	if herr != nil {
		m.Note("dsh: " + herr.Error())
	}
	switch {
	case id != "":
		if err := m.Open(id); err != nil {
			return err
		}
	case pick:
		m.Pick()
	}

	printBacklog(io, m, cfg.Color)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithOutput(io.Out), tea.WithoutSignalHandler(), tea.WithFPS(chatFPS)}
	if f, ok := io.In.(*os.File); ok {
		opts = append(opts, tea.WithInput(f))
	}
	if !cfg.Color {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	op.note.run(p)
	go func() { // SIGTERM and SIGHUP (Ctrl-C is a key in the chat)
		if io.Interrupts == nil {
			return
		}
		select {
		case <-io.Interrupts:
			p.Kill()
		case <-done:
		}
	}()
	_, runErr := p.Run()
	op.note.run(nil)
	if m.Interrupted || errors.Is(runErr, tea.ErrProgramKilled) {
		host.KillAll()
	} else if current != nil {
		if err := current.Close(); err != nil {
			warner(io)(err.Error())
		}
	}
	if current != nil && logKept(current.Path()) { // a session left without a word leaves no log
		fmt.Fprintln(io.Err, goOnHint(current.ID(), op.sessions))
	}
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	if m.Interrupted {
		return exitError{130}
	}
	return nil
}

// logKept says the session log at path is still there.
func logKept(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// goOnHint says how to go on with session id: dsh -c only when it is the
// session -c opens (the newest of the directory; /resume may have opened an
// older one).
func goOnHint(id string, sessions func() ([]session.Info, error)) string {
	if infos, err := sessions(); err == nil && len(infos) > 0 && infos[0].ID == id {
		return fmt.Sprintf("session %s — go on with: dsh -c   (or dsh --resume %s)", id, id)
	}
	return fmt.Sprintf("session %s — go on with: dsh --resume %s", id, id)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// printBacklog writes the chat's backlog (a resumed session's history) to the
// terminal before the chat starts, in the colours the chat's renderer would
// use for it; with none, an empty line. Either way the chat's frame does not
// start at the screen's top row, where tmux (scroll-on-clear) takes the
// renderer's clearing of the frame for clearing the screen and keeps a copy
// of the frame in the scrollback.
func printBacklog(io IO, m *chat.Model, color bool) {
	text := m.TakeBacklog()
	if text == "" {
		_, _ = fmt.Fprintln(io.Out)
		return
	}
	var env []string
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM_PROGRAM", "TMUX"} {
		if v := io.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	w := colorprofile.NewWriter(io.Out, env)
	if !color {
		w.Profile = colorprofile.Ascii
	}
	_, _ = w.WriteString(text)
}
