package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// keysHelp is what /help adds, after the host's list of commands, about the
// chat's own keys.
const keysHelp = "Keys: Enter sends · Shift+Enter or Ctrl-J a new line · ↑/↓ history · / lists the commands (type to filter) · @path attaches a file (Tab completes) · ←/→ in /model's list set the thinking · !cmd runs a command yourself · Esc cancels the turn · Ctrl-G edits the prompt in $VISUAL or $EDITOR · Ctrl-S picks a session to resume · Alt-P picks the model · Ctrl-O shows the last subagent's calls in full · Ctrl-L redraws · Ctrl-C twice exits"

// submittedMsg is what the host made of an input: a turn that ended, or a
// command's answer.
type submittedMsg struct {
	gen  int
	in   host.Input
	a    host.Answer
	err  error
	turn bool // the chat showed the input as a running turn
}

// submitInput hands what the user typed to the host, in a command: the host
// parses it (a slash command of the session's table, @paths, pastes) and runs
// the turn or answers the command; the records it logs come back as events.
func (m *Model) submitInput(text string, parts []card.Content) tea.Cmd {
	in := host.Input{Text: text, Content: parts, Where: host.Terminal}
	if m.sess == nil {
		// The session is still opening (its MCP servers starting): the input
		// goes when it is open.
		m.waiting = append(m.waiting, in)
		return m.openNew()
	}
	turn := !m.sess.Answers(text, host.Terminal)
	if turn {
		if m.running {
			m.queued, m.queuedP = text, parts
			return m.setNotice("queued: sent when this turn ends (Esc cancels the turn)")
		}
		m.running = true
		m.notice = ""
	}
	s, gen := m.sess, m.gen
	cmds := []tea.Cmd{func() tea.Msg {
		a, err := s.Submit(context.Background(), in)
		return submittedMsg{gen: gen, in: in, a: a, err: err, turn: turn}
	}}
	if turn {
		cmds = append(cmds, m.spin.Tick)
	}
	return tea.Batch(cmds...)
}

// submitted shows what came of an input: a turn's end, an error, or what a
// command of the chat's own asks (a picker, another session, leaving). A
// command's answer is in the record the host logged, which the chat prints
// as it prints every record.
func (m *Model) submitted(msg submittedMsg) tea.Cmd {
	if msg.turn {
		stop := msg.a.Stop
		if stop == "" { // /compact, or an input that ran no turn
			stop = host.StopEndTurn
			if msg.err != nil {
				stop = host.StopError
			}
		}
		return m.turnDone(turnDoneMsg{gen: msg.gen, stop: stop, err: msg.err})
	}
	if msg.err != nil {
		m.sb.note(userError(msg.err))
		return nil
	}
	r := msg.a.Reply
	switch r.Action {
	case host.ActionNew:
		return m.open("")
	case host.ActionResume:
		if r.Arg != "" {
			return m.open(r.Arg)
		}
		return m.pick()
	case host.ActionExit:
		return m.exit()
	case host.ActionNone:
	}
	switch {
	case len(r.Diff) > 0:
		m.reviewDiff(r)
	case len(r.Models) > 0 && !strings.Contains(msg.in.Text, " "):
		m.picker = m.modelPicker(r.Models)
	case len(r.Points) > 0:
		m.picker = m.rewindPicker(r.Points)
	case r.Fork != "":
		return m.open(r.Fork)
	}
	return nil
}

// userError is an error of an input in the user's words.
func userError(err error) string {
	if errors.Is(err, host.ErrBusy) {
		return "a turn is running: wait, or Esc to cancel it"
	}
	return "error: " + err.Error()
}

// command runs a command the chat itself offers a key or a picker for, as if
// it were typed.
func (m *Model) command(typed string) tea.Cmd { return m.submitInput(typed, nil) }

// commands are the slash commands the chat offers: the session's table, or,
// while it opens, the built-in ones.
func (m *Model) commands() []host.Command {
	if m.sess == nil {
		return m.builtins
	}
	return m.table
}

// open replaces the session: id ("" a new one) is opened and its history
// printed, then the current one is closed, in a command (see io.go).
func (m *Model) open(id string) tea.Cmd {
	if !m.canOpen(id) {
		return nil
	}
	m.opening = true
	open := m.openCmd(id)
	return func() tea.Msg { return open() }
}

// openNew opens the chat's first session, once, in a command: its custom
// commands, skills and MCP prompts are in the palette as soon as it is open.
func (m *Model) openNew() tea.Cmd {
	if m.sess != nil || m.opening || m.picker != nil || m.cfg.Open == nil {
		return nil
	}
	return m.open("")
}

// Note prints a harness message above the chat.
func (m *Model) Note(s string) { m.sb.note(s) }

// Open shows the session id in place of the current one, its history first.
func (m *Model) Open(id string) error {
	if !m.canOpen(id) {
		return fmt.Errorf("cannot open session %s", id)
	}
	msg := m.openCmd(id)() // before the program runs: no Update to keep free of I/O
	m.opened(msg)
	if msg.err != nil {
		return fmt.Errorf("cannot open session %s: %w", id, msg.err)
	}
	return nil
}

// Pick offers this directory's sessions to resume.
func (m *Model) Pick() {
	msg := m.listSessions()() // before the program runs
	m.listed(msg.(sessionsMsg))
}

// sessionsMsg is this directory's sessions, listed for the picker.
type sessionsMsg struct {
	infos []session.Info
	err   error
}

// pick lists the sessions in a command, then offers them.
func (m *Model) pick() tea.Cmd { return m.listSessions() }

// modelsMsg is the models the session accepts, listed for the picker.
type modelsMsg []host.Model

// pickModel lists the models in a command (the provider may be asked), then
// offers them as /model does.
func (m *Model) pickModel() tea.Cmd {
	s := m.sess
	if s == nil {
		return nil
	}
	return func() tea.Msg { return modelsMsg(s.Models()) }
}

func (m *Model) listSessions() tea.Cmd {
	list := m.cfg.Sessions
	return func() tea.Msg {
		if list == nil {
			return sessionsMsg{}
		}
		infos, err := list()
		return sessionsMsg{infos, err}
	}
}

// listed offers the sessions listed, but the one shown.
func (m *Model) listed(msg sessionsMsg) {
	if msg.err != nil {
		m.sb.note("cannot list the sessions: " + msg.err.Error())
		return
	}
	var others []session.Info
	for _, in := range msg.infos {
		if m.sess == nil || in.ID != m.sess.ID() {
			others = append(others, in)
		}
	}
	if len(others) == 0 {
		m.sb.note("no other session in this directory")
		return
	}
	m.picker = m.sessionPicker(others)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
