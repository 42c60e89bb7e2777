package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/session"
)

// slash runs a slash command.
func (m *Model) slash(name, args string) tea.Cmd {
	c, ok := command.Find(m.cfg.Commands, name)
	if !ok {
		m.sb.note(fmt.Sprintf("unknown command /%s (/help lists them)", name))
		return nil
	}
	if c.Custom() {
		if m.running {
			m.sb.note("a turn is running: wait, or Esc to cancel it")
			return nil
		}
		if c.MCP() {
			return m.mcpPrompt(c.Name, args)
		}
		return m.send(c.Expand(args), nil)
	}
	switch name {
	case "help":
		m.sb.note(m.help())
	case "exit":
		return m.exit()
	case "new":
		return m.open("")
	case "resume":
		if args != "" {
			return m.open(args)
		}
		return m.pick()
	case "sessions":
		m.sb.note(m.sessionList())
	case "mode", "model", "cost", "mcp", "compact", "undo", "rewind", "agents":
		return m.hostCommand(name, args)
	default:
		m.sb.note(fmt.Sprintf("/%s does not work in the terminal", name))
	}
	return nil
}

func (m *Model) help() string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range m.cfg.Commands {
		name := "/" + c.Name
		if c.ArgHint != "" {
			name += " " + c.ArgHint
		}
		fmt.Fprintf(&b, "\n  %s — %s", name, c.Description)
	}
	b.WriteString("\nKeys: Enter sends · Shift+Enter or Ctrl-J a new line · ↑/↓ history · / lists the commands (type to filter) · @path attaches a file (Tab completes) · ←/→ in /model's list set the thinking · Esc cancels the turn · Ctrl-O shows the last subagent's calls in full · Ctrl-C twice exits")
	return b.String()
}

func (m *Model) sessionList() string {
	infos, err := m.sessions()
	if err != nil {
		return "cannot list the sessions: " + err.Error()
	}
	if len(infos) == 0 {
		return "no sessions in this directory yet"
	}
	var b strings.Builder
	b.WriteString("Sessions of this directory (/resume ID reopens one):")
	for _, in := range infos {
		fmt.Fprintf(&b, "\n  %s  %s  %s", in.ID, in.Updated.Local().Format(time.DateTime), oneLine(in.FirstPrompt, 50))
	}
	return b.String()
}

func (m *Model) sessions() ([]session.Info, error) {
	if m.cfg.Sessions == nil {
		return nil, nil
	}
	return m.cfg.Sessions()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// open replaces the session: id ("" a new one) is opened and its history
// printed, then the current one is closed, in a command (see io.go).
func (m *Model) open(id string) tea.Cmd {
	if !m.canOpen(id) {
		return nil
	}
	open := m.openCmd(id, nil)
	return func() tea.Msg { return open() }
}

// Note prints a harness message above the chat.
func (m *Model) Note(s string) { m.sb.note(s) }

// Open shows the session id in place of the current one, its history first.
func (m *Model) Open(id string) error {
	if !m.canOpen(id) {
		return fmt.Errorf("cannot open session %s", id)
	}
	msg := m.openCmd(id, nil)() // before the program runs: no Update to keep free of I/O
	m.opened(msg)
	if msg.err != nil {
		return fmt.Errorf("cannot open session %s: %w", id, msg.err)
	}
	return nil
}

// Pick offers this directory's sessions to resume.
func (m *Model) Pick() { m.pick() }

// ensureSession opens a new session when there is none yet: the chat creates
// its log on the first prompt, so opening dsh and leaving leaves nothing behind.
// The command it returns reads the new session's events; whoever opened the
// session must run it, or the chat sees none of them.
func (m *Model) ensureSession() (tea.Cmd, bool) {
	if m.sess != nil {
		return nil, true
	}
	var wait tea.Cmd
	if m.canOpen("") {
		wait = m.opened(m.openCmd("", nil)())
	}
	return wait, m.sess != nil
}

func (m *Model) pick() tea.Cmd {
	infos, err := m.sessions()
	if err != nil {
		m.sb.note("cannot list the sessions: " + err.Error())
		return nil
	}
	var others []session.Info
	for _, in := range infos {
		if m.sess == nil || in.ID != m.sess.ID() {
			others = append(others, in)
		}
	}
	if len(others) == 0 {
		m.sb.note("no other session in this directory")
		return nil
	}
	m.picker = m.sessionPicker(others)
	return nil
}

// mcpPrompt sends what an MCP server's prompt expands to; the server answers
// within the host's bound, so the chat waits for it before the turn starts.
func (m *Model) mcpPrompt(name, args string) tea.Cmd {
	ex, ok := m.sess.(PromptExpander)
	if !ok {
		m.sb.note(fmt.Sprintf("/%s: this session has no MCP prompts", name))
		return nil
	}
	text, _, err := ex.ExpandPrompt(context.Background(), name, args)
	if err != nil {
		m.sb.note(fmt.Sprintf("/%s: %v", name, err))
		return nil
	}
	return m.send(text, nil)
}
