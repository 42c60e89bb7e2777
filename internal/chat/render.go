package chat

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termfold"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
)

// scrollback turns a session's records into the text printed above the chat,
// once, through the terminal fold `dsh run` and `dsh replay` share: the
// terminal keeps it, the chat does not, so a session of any length costs only
// its open calls. Live and on resume it is fed the same records and skips the
// same progress, so a card folds the same in both.
type scrollback struct {
	fold *termfold.Fold
	out  bytes.Buffer // what is still to be printed
	r    *termui.Renderer
	warn func(string)
	dir  string // where a subagent's log is, beside its parent's
}

func newScrollback(reg *tool.Registry, o termui.Options, warn func(string)) *scrollback {
	s := &scrollback{warn: warn}
	s.r = termui.New(&s.out, o)
	s.present(reg)
	return s
}

// present makes the records of a session with the tools reg from now on.
func (s *scrollback) present(reg *tool.Registry) {
	if reg == nil {
		s.fold = nil
		return
	}
	s.fold = termfold.New(reg, func(err error) { s.note("presenter: " + err.Error()) })
	// A subagent's calls are one line each under its task; Ctrl-O draws the
	// last one's in full from its log.
	s.fold.Collapsed = true
	s.fold.ChildLog = func(id string, fn func(session.Record) error) error {
		if s.dir == "" {
			return errors.New("the session directory is not known")
		}
		return host.ReplayChild(s.dir, id, fn)
	}
}

// childDir says where the sessions' logs are.
func (s *scrollback) childDir(dir string) { s.dir = dir }

// child renders a subagent's record under its task.
func (s *scrollback) child(c *host.Child) {
	if s.fold == nil || c.Event.Kind != host.KindRecord || c.Event.Record.Type == session.TypeProgress {
		return
	}
	s.draw(func(r *termui.Renderer) error { return s.fold.Child(r, c.Call, c.Session, c.Event.Record) })
}

// expandLast is what draws the last finished subagent's calls in full (nil:
// no session is shown).
func (s *scrollback) expandLast() func(r *termui.Renderer) error {
	if s.fold == nil {
		return nil
	}
	return s.fold.ExpandLast()
}

// resize makes the next blocks fit width.
func (s *scrollback) resize(width int) { s.r.Resize(width) }

// draw renders blocks and queues them.
func (s *scrollback) draw(f func(r *termui.Renderer) error) {
	if err := f(s.r); err != nil && s.warn != nil {
		s.warn(err.Error())
	}
}

func (s *scrollback) note(text string) {
	s.draw(func(r *termui.Renderer) error { return r.Note(text) })
}

// adopt queues what o rendered (a resumed session's history, rendered where
// the log was read) after what s has queued.
func (s *scrollback) adopt(o *scrollback) {
	if !o.r.Started() {
		return
	}
	if s.r.Started() {
		s.out.WriteByte('\n')
	}
	s.out.Write(o.out.Bytes())
	s.r.Continue()
}

// take returns what is to be printed, without its final newline (the printer
// adds one), and forgets it.
func (s *scrollback) take() string {
	t := strings.TrimSuffix(s.out.String(), "\n")
	s.out.Reset()
	return t
}

// record renders one record. Progress is not printed: the running call's output
// shows live under the input's view and the result card folds it.
func (s *scrollback) record(rec session.Record) {
	if s.fold == nil || rec.Type == session.TypeProgress {
		return
	}
	s.draw(func(r *termui.Renderer) error { return s.fold.Record(r, rec) })
}

// setApproval draws the pending call as the user approves it: a change in
// full with both line numbers, a command with where it would run, in rows
// the box cuts to its height ([e] reviews them all). It is drawn when the
// prompt appears or the width changes, not at every frame.
func (m *Model) setApproval() {
	c := m.perm.Request.Card
	m.permCard = bodyLines(renderApproval(c, m.boxOpts()))
	if _, ok := c.(*card.TerminalCall); ok {
		m.permCard = append(m.permCard, m.style(lipgloss.NewStyle().Faint(true)).Render(wrapText("  "+m.commandWhere(), max(m.width-4, 20))))
	}
}

// boxOpts render a card inside a box, unfolded: the box folds what does not fit.
func (m *Model) boxOpts() termui.Options {
	o := m.termOpts()
	o.Width, o.FoldAbove = max(m.width-4, 20), math.MaxInt
	return o
}

// reviewOpts render a card for the full-screen review: all of it.
func (m *Model) reviewOpts() termui.Options {
	o := m.termOpts()
	o.FoldAbove = math.MaxInt
	return o
}

func renderApproval(c card.Call, o termui.Options) string {
	if c == nil {
		return ""
	}
	var b bytes.Buffer
	if err := termui.New(&b, o).Approval(c); err != nil {
		return fmt.Sprintf("(the call cannot be shown: %v)\n", err)
	}
	return b.String()
}

// commandWhere says where a command would run: its directory, relative to the
// workspace, and whether in the sandbox.
func (m *Model) commandWhere() string {
	dir := "the workspace root"
	if cwd := m.status.Cwd; cwd != "" {
		if rel, err := filepath.Rel(m.cfg.Root, cwd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			dir = rel
		} else if err != nil || rel != "." {
			dir = cwd
		}
	}
	switch m.status.Sandbox {
	case host.SandboxOn:
		return "in " + dir + " · sandboxed: writes only in the workspace and temp"
	case host.SandboxNetworkOff:
		return "in " + dir + " · sandboxed: writes only in the workspace and temp, no network"
	case host.SandboxOff:
	}
	return "in " + dir + " · not sandboxed"
}
