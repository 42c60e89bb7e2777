package chat

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/view"
)

// /diff in the chat: typed without an argument it offers the session's
// changes to choose from, the whole session first; the host shows the one
// chosen as a record (its card goes to the scrollback, as in every view),
// and a diff taller than the screen opens in the full-screen review.

// pointsMsg is the session's changes, listed for /diff's picker.
type pointsMsg struct {
	points []host.Point
	err    error
}

// listPoints lists the session's changes in a command.
func (m *Model) listPoints() tea.Cmd {
	s := m.sess
	return func() tea.Msg {
		points, err := s.Points(context.Background())
		return pointsMsg{points, err}
	}
}

// diffPicker offers the changes of msg; without any, the host says there is
// nothing to show.
func (m *Model) diffPicker(msg pointsMsg) tea.Cmd {
	if msg.err != nil {
		m.sb.note("cannot list the changes: " + msg.err.Error())
		return nil
	}
	if len(msg.points) == 0 {
		return m.command("/diff")
	}
	p := &picker{title: "Show what changed where?", choose: func(n string) tea.Cmd {
		if n == "" {
			return m.command("/diff")
		}
		return m.command("/diff " + n)
	}}
	p.items = append(p.items, pickItem{label: "the whole session", note: "from before the first prompt to now"})
	for _, pt := range slices.Backward(msg.points) {
		label := fmt.Sprintf("%d. %s", pt.N, oneLine(pt.Text, 50))
		switch {
		case pt.Note != "":
			label += "  — " + pt.Note
		case len(pt.Files) == 0:
			label += "  — no files changed"
		default:
			label += "  — " + host.FilesText(pt.Files)
		}
		p.items = append(p.items, pickItem{label: label, value: strconv.Itoa(pt.N)})
	}
	m.picker = p
	return nil
}

// reviewDiff opens /diff's answer full-screen when it does not fit the
// screen or the scrollback folds it: every row of it, the first to the last.
func (m *Model) reviewDiff(r host.Reply) {
	c, _ := view.DiffCards(r.Text, r.Diff)
	full := bodyLines(renderApproval(c, m.reviewOpts()))
	folded := bodyLines(renderApproval(c, m.termOpts()))
	if len(full) > m.height-2 || len(folded) < len(full) {
		m.openReview(r.Text, full)
	}
}
