package chat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
)

// picker is a list the user chooses one item of: ↑/↓ and Enter, Esc leaves,
// and typing filters it (fuzzy, on the labels).
type picker struct {
	title  string
	items  []pickItem
	filter string
	sel    int // into shown()
	choose func(value string) tea.Cmd
}

type pickItem struct {
	label, value string
	current      bool // marked as the one in force
}

// pickerRows bounds how many items are shown at once.
const pickerRows = 10

func (p *picker) shown() []pickItem {
	if p.filter == "" {
		return p.items
	}
	labels := make([]string, len(p.items))
	for i, it := range p.items {
		labels[i] = it.label
	}
	var out []pickItem
	for _, m := range fuzzy.Find(p.filter, labels) {
		out = append(out, p.items[m.Index])
	}
	return out
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	items := p.shown()
	switch ks := k.String(); ks {
	case "up":
		if len(items) > 0 {
			p.sel = (p.sel + len(items) - 1) % len(items)
		}
	case "down":
		if len(items) > 0 {
			p.sel = (p.sel + 1) % len(items)
		}
	case "esc":
		m.picker = nil
	case "enter":
		if len(items) == 0 {
			return nil
		}
		m.picker = nil
		return p.choose(items[p.sel].value)
	case "backspace":
		if p.filter != "" {
			r := []rune(p.filter)
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			p.filter, p.sel = p.filter+k.Text, 0
		}
	}
	return nil
}

func (m *Model) pickerView() string {
	p := m.picker
	var b strings.Builder
	bold := m.style(lipgloss.NewStyle().Bold(true))
	dim := m.style(lipgloss.NewStyle().Faint(true))
	b.WriteString(bold.Render(wrapText(p.title+" (↑/↓, Enter, Esc; type to filter)", m.width)))
	b.WriteByte('\n')
	if p.filter != "" {
		b.WriteString(dim.Render(wrapText("filter: "+p.filter, m.width)))
		b.WriteByte('\n')
	}
	items := p.shown()
	if len(items) == 0 {
		b.WriteString(dim.Render("  nothing matches"))
		b.WriteByte('\n')
	}
	// The window of rows follows the selection.
	from := max(0, min(p.sel-pickerRows+1, len(items)-pickerRows))
	for i := from; i < min(len(items), from+pickerRows); i++ {
		it := items[i]
		mark := "  "
		if i == p.sel {
			mark = "› "
		}
		line := mark + it.label
		if it.current {
			line += "  (current)"
		}
		line = ansi.Truncate(line, max(m.width, 1), "…")
		if i == p.sel {
			line = bold.Render(line)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if n := len(items) - pickerRows; n > 0 {
		b.WriteString(dim.Render(fmt.Sprintf("  %d more", n)))
		b.WriteByte('\n')
	}
	return b.String()
}

// sessionPicker offers sessions to resume, each with its first prompt and age.
func (m *Model) sessionPicker(infos []session.Info) *picker {
	p := &picker{title: "Resume which session?", choose: m.open}
	now := m.cfg.Now()
	for _, in := range infos {
		title := oneLine(in.FirstPrompt, 60)
		if title == "" {
			title = "(no prompt yet)"
		}
		p.items = append(p.items, pickItem{label: fmt.Sprintf("%s  %s  %s", title, age(now.Sub(in.Updated)), in.ID), value: in.ID})
	}
	return p
}

// modelPicker offers the models /model accepts (the host's list, the editor's
// picker's), the current one marked.
func (m *Model) modelPicker(list []models.Info) *picker {
	p := &picker{title: "Which model?", choose: func(id string) tea.Cmd { return m.hostCommand("model", id) }}
	cur := m.status.Model
	for i, in := range list {
		label := in.ID
		if in.Name != "" && in.Name != in.ID {
			label += "  " + in.Name
		}
		if in.ContextWindow > 0 {
			label += "  " + tokens(in.ContextWindow) + " context"
		}
		p.items = append(p.items, pickItem{label: label, value: in.ID, current: in.ID == cur})
		if in.ID == cur {
			p.sel = i
		}
	}
	return p
}

// rewindPicker offers the session's changes, newest first: Enter puts the
// files back as they were before the one chosen (after the diff is approved).
func (m *Model) rewindPicker(points []host.Point) *picker {
	p := &picker{title: "Put the files back as they were before which change?",
		choose: func(n string) tea.Cmd { return m.hostCommand("rewind", n) }}
	for _, pt := range slices.Backward(points) {
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
	return p
}

// age says how long ago briefly: "just now", "5 min ago", "3 h ago", "2 days ago".
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}
