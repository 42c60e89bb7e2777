package chat

import (
	tea "charm.land/bubbletea/v2"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The chat's I/O — opening a session and reading its log, handing input to
// the host, listing sessions, walking the workspace for @ completion, reading
// a subagent's log — runs in tea.Cmds, never in Update: each returns one of
// these messages, which Update applies.
type (
	// openedMsg is a session opened (or the error), with its history rendered.
	openedMsg struct {
		id            string
		o             Opened
		err, closeErr error
		history       *scrollback // the resumed session's records, rendered
	}
	// filesMsg is the workspace's files for @ completion.
	filesMsg struct{ files []string }
	// expandedMsg is the last subagent's calls, drawn from its log (Ctrl-O).
	expandedMsg struct{ sb *scrollback }
)

// canOpen says whether a session can be opened now, and if not, why.
func (m *Model) canOpen(id string) bool {
	switch {
	case m.running:
		m.sb.note("a turn is running: wait, or Esc to cancel it")
	case m.cfg.Open == nil:
		m.sb.note("cannot open sessions here")
	case m.sess != nil && id == m.sess.ID():
		m.sb.note("that is this session")
	default:
		return true
	}
	return false
}

// openCmd opens id ("" a new session) and renders its history, then closes the
// session it replaces; it touches nothing of m.
func (m *Model) openCmd(id string) func() openedMsg {
	open, old, opts, dir := m.cfg.Open, m.sess, m.termOpts(), m.cfg.SessionDir
	return func() openedMsg {
		msg := openedMsg{id: id}
		var reg *tool.Registry
		sb := newScrollback(nil, opts, nil)
		sb.childDir(dir)
		sb.warn = func(s string) { sb.note("dsh: " + s) }
		msg.o, msg.err = open(id, func(r *tool.Registry, rec session.Record) {
			if r != reg {
				reg = r
				sb.present(r)
			}
			sb.record(rec)
		})
		msg.history = sb
		if msg.err == nil && old != nil {
			msg.closeErr = old.Close()
		}
		return msg
	}
}

// opened shows the session a openCmd opened, and sends what was typed while
// it opened.
func (m *Model) opened(msg openedMsg) tea.Cmd {
	m.opening = false
	if msg.err != nil {
		m.sb.note("cannot open the session: " + msg.err.Error())
		m.waiting = nil
		return nil
	}
	if msg.closeErr != nil {
		m.sb.note("closing the last session: " + msg.closeErr.Error())
	}
	hadSession := m.sess != nil
	m.sb.adopt(msg.history)
	m.attach(msg.o)
	switch {
	case msg.o.Joined:
		m.sb.note("joined session " + msg.o.Session.ID() + ", live in another dsh: leaving here leaves it running")
	case msg.id != "":
		m.sb.note("resumed session " + msg.o.Session.ID())
	case hadSession:
		m.sb.note("new session " + msg.o.Session.ID())
	}
	cmds := []tea.Cmd{m.waitEvents()}
	waiting := m.waiting
	m.waiting = nil
	for _, in := range waiting {
		cmds = append(cmds, m.submitInput(in.Text, in.Content))
	}
	return tea.Batch(cmds...)
}

// expand draws the last finished subagent's calls in full (Ctrl-O): its log is
// read in a command, into a scrollback of its own, which Update then prints.
func (m *Model) expand() tea.Cmd {
	draw := m.sb.expandLast()
	if draw == nil {
		return nil
	}
	opts, dir := m.termOpts(), m.cfg.SessionDir
	return func() tea.Msg {
		sb := newScrollback(nil, opts, nil)
		sb.childDir(dir)
		sb.warn = func(s string) { sb.note("dsh: " + s) }
		sb.draw(draw)
		return expandedMsg{sb}
	}
}

// walkFiles lists the workspace's files for @ completion.
func (m *Model) walkFiles() tea.Cmd {
	files, root := m.cfg.Files, m.cfg.Root
	return func() tea.Msg {
		if files != nil {
			return filesMsg{files()}
		}
		return filesMsg{listFiles(root)}
	}
}

type (
	// editingMsg is the prompt written to a file for the user's editor
	// (Ctrl-G); editedMsg is what the user left there.
	editingMsg struct {
		path string
		err  error
	}
	editedMsg struct {
		text string
		err  error
	}
)

// editPrompt writes the prompt to a file, in a command, for the user's editor.
func (m *Model) editPrompt() tea.Cmd {
	text := m.input.Value()
	return func() tea.Msg {
		f, err := os.CreateTemp("", "dsh-prompt-*.md")
		if err != nil {
			return editingMsg{err: err}
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return editingMsg{path: f.Name(), err: err}
	}
}

// runEditor hands the terminal to the user's editor on the prompt's file;
// what they leave there is the prompt.
func (m *Model) runEditor(msg editingMsg) tea.Cmd {
	if msg.err != nil {
		m.sb.note("cannot edit the prompt: " + msg.err.Error())
		return nil
	}
	editor := cmp.Or(m.cfg.Editor, "vi")
	// The editor variable may hold arguments (code --wait): the shell splits it.
	c := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", msg.path)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer func() { _ = os.Remove(msg.path) }()
		if err != nil {
			return editedMsg{err: fmt.Errorf("%s: %w", editor, err)}
		}
		b, err := os.ReadFile(msg.path)
		return editedMsg{text: strings.TrimRight(string(b), "\n"), err: err}
	})
}
