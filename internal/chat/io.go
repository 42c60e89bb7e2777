package chat

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The chat's I/O — opening a session and reading its log, reading the files a
// prompt attaches, walking the workspace for @ completion — runs in tea.Cmds,
// never in Update: each returns one of these messages, which Update applies.
type (
	// openedMsg is a session opened (or the error), with its history rendered.
	openedMsg struct {
		id            string
		o             Opened
		err, closeErr error
		history       *scrollback // the resumed session's records, rendered
		then          *pending    // a prompt that waited for the session
	}
	// preparedMsg is a prompt with the files it mentions read.
	preparedMsg struct{ p *pending }
	// filesMsg is the workspace's files for @ completion.
	filesMsg struct{ files []string }
)

// pending is a prompt on its way to the model.
type pending struct {
	text    string
	parts   []card.Content // pastes, then attached files
	skipped []string       // mentions not attached, with why
}

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
func (m *Model) openCmd(id string, then *pending) func() openedMsg {
	open, old, opts, dir := m.cfg.Open, m.sess, m.termOpts(), m.cfg.SessionDir
	return func() openedMsg {
		msg := openedMsg{id: id, then: then}
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

// opened shows the session a openCmd opened.
func (m *Model) opened(msg openedMsg) tea.Cmd {
	if msg.err != nil {
		m.sb.note("cannot open the session: " + msg.err.Error())
		if msg.then != nil {
			m.running = false
		}
		return nil
	}
	if msg.closeErr != nil {
		m.sb.note("closing the last session: " + msg.closeErr.Error())
	}
	hadSession := m.sess != nil
	m.sb.adopt(msg.history)
	m.attach(msg.o)
	switch {
	case msg.id != "":
		m.sb.note("resumed session " + msg.o.Session.ID())
	case hadSession:
		m.sb.note("new session " + msg.o.Session.ID())
	}
	cmds := []tea.Cmd{m.waitEvents()}
	if msg.then != nil {
		// attach marked the new session idle; its first turn starts now, and
		// shows as running so that Esc cancels it.
		m.running = true
		cmds = append(cmds, m.start(msg.then))
	}
	return tea.Batch(cmds...)
}

// send starts a turn with text and its pastes: the files it mentions are read
// (and a session opened, if there is none yet) in commands, then the turn starts.
func (m *Model) send(text string, pastes []card.Content) tea.Cmd {
	m.running = true
	m.notice = ""
	root := m.cfg.Root
	return tea.Batch(m.spin.Tick, func() tea.Msg {
		files, skipped := attachFiles(root, text)
		return preparedMsg{&pending{text: text, parts: append(pastes, files...), skipped: skipped}}
	})
}

// prepared goes on with a prompt whose files are read.
func (m *Model) prepared(p *pending) tea.Cmd {
	for _, s := range p.skipped {
		m.sb.note("not attached: " + s)
	}
	if m.sess == nil {
		if m.cfg.Open == nil {
			m.sb.note("cannot open sessions here")
			m.running = false
			return nil
		}
		open := m.openCmd("", p)
		return func() tea.Msg { return open() }
	}
	return m.start(p)
}

// start runs the turn.
func (m *Model) start(p *pending) tea.Cmd {
	s, gen := m.sess, m.gen
	return func() tea.Msg {
		stop, err := s.Prompt(context.Background(), p.text, p.parts...)
		return turnDoneMsg{gen: gen, stop: stop, err: err}
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
