package chat

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// box draws what the chat asks the user — a call to allow, a plan, a
// question — in a border, so that it does not read as more scrollback: title
// in the top edge, body rows cut to the rows it may take (the rest are for
// the review: [e]), and the keys under it.
func (m *Model) box(title string, body []string, keys string, rows int) string {
	w := max(m.width, 24)
	edge := m.style(lipgloss.NewStyle().Faint(true))
	bold := m.style(lipgloss.NewStyle().Bold(true))
	title = ansi.Truncate(title, w-6, "…")
	var b strings.Builder
	b.WriteString(edge.Render("╭─ "))
	b.WriteString(bold.Render(title))
	b.WriteString(edge.Render(" " + strings.Repeat("─", max(w-5-ansi.StringWidth(title), 0)) + "╮"))
	b.WriteByte('\n')
	if hidden := len(body) - rows; hidden > 0 {
		body = append(body[:max(rows-1, 0):max(rows-1, 0)], edge.Render(fmt.Sprintf("… %d more rows: [e] to review all", hidden+1)))
	}
	for _, l := range body {
		l = ansi.Truncate(l, w-4, "…")
		b.WriteString(edge.Render("│ "))
		b.WriteString(l)
		b.WriteString(strings.Repeat(" ", max(w-4-ansi.StringWidth(l), 0)))
		b.WriteString(edge.Render(" │"))
		b.WriteByte('\n')
	}
	b.WriteString(edge.Render("╰" + strings.Repeat("─", w-2) + "╯"))
	b.WriteByte('\n')
	b.WriteString(bold.Render(wrapText(keys, w)))
	b.WriteByte('\n')
	return b.String()
}

// boxRows is how many body rows a box may take: the view's rows less the
// input, the status line (wrapped on a narrow screen), the box's edges and
// keys, so that the box is never cut at the top.
func (m *Model) boxRows(keys string) int {
	fixed := 1 + m.input.Height() + len(bodyLines(m.statusLine())) + 2 + len(strings.Split(wrapText(keys, max(m.width, 24)), "\n"))
	if m.notice != "" {
		fixed++
	}
	return max(viewRows(m.height)-fixed, 1) // on a tiny screen, the count of rows to review
}

// bodyLines splits rendered text into its rows.
func bodyLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// review is the full-screen view of something too long for its box: a
// change, a plan, a command. Every row is reachable; the keys say how.
type review struct {
	title string
	lines []string
	top   int
}

// reviewKeys are the pager's keys, on its last row.
const reviewKeys = "↑/↓ PgUp/PgDn scroll · g/G first/last · q back"

// openReview shows lines full-screen.
func (m *Model) openReview(title string, lines []string) {
	m.review = &review{title: title, lines: lines}
}

// reviewPage is how many rows of the review show at once.
func (m *Model) reviewPage() int { return max(m.height-2, 1) }

// reviewKey scrolls the review or closes it; it says whether the key was the
// review's (the others answer what the review is of).
func (m *Model) reviewKey(ks string) bool {
	r := m.review
	page := m.reviewPage()
	last := max(len(r.lines)-page, 0)
	switch ks {
	case "up", "k":
		r.top--
	case "down", "j", "enter":
		r.top++
	case "pgup", "b", "shift+space":
		r.top -= page
	case "pgdown", "space", "f", " ":
		r.top += page
	case "home", "g":
		r.top = 0
	case "end", "G":
		r.top = last
	case "q", "esc", "e":
		m.review = nil
		return true
	default:
		return false
	}
	r.top = min(max(r.top, 0), last)
	return true
}

// reviewView draws the review on the alternate screen: a title row with
// where the page is, the rows, and the keys.
func (m *Model) reviewView() tea.View {
	r := m.review
	page := m.reviewPage()
	end := min(r.top+page, len(r.lines))
	bold := m.style(lipgloss.NewStyle().Bold(true))
	dim := m.style(lipgloss.NewStyle().Faint(true))
	var b strings.Builder
	head := fmt.Sprintf("%s · rows %d–%d of %d", r.title, min(r.top+1, end), end, len(r.lines))
	b.WriteString(bold.Render(ansi.Truncate(head, m.width, "…")))
	b.WriteByte('\n')
	for i := r.top; i < r.top+page; i++ {
		if i < end {
			b.WriteString(ansi.Truncate(r.lines[i], m.width, "…"))
		}
		b.WriteByte('\n')
	}
	keys := reviewKeys
	if m.perm != nil {
		answers := "[y] yes  "
		if canRemember(m.perm) {
			answers += "[a] always  "
		}
		keys = answers + "[n] no · " + keys
	}
	b.WriteString(dim.Render(ansi.Truncate(keys, m.width, "…")))
	v := tea.NewView(b.String())
	v.AltScreen = true
	return v
}
