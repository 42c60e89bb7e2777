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
	// inline says the filter is what the input holds (the / palette): the
	// input keeps the keys, the list only follows it.
	inline bool
	// levels, when set, are the thinking levels ←/→ switch between (the
	// model picker); level is the one chosen, passed to choose with the item.
	levels []host.ThinkingLevel
	level  int
}

type pickItem struct {
	label, value string
	note         string // drawn dim after the labels' column (a command's description)
	current      bool   // marked as the one in force
}

// head is the item's label, marked when it is the one in force.
func (it pickItem) head() string {
	if it.current {
		return it.label + " (current)"
	}
	return it.label
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
	case "left", "right":
		if n := len(p.levels); n > 0 {
			if ks == "left" {
				p.level = (p.level + n - 1) % n
			} else {
				p.level = (p.level + 1) % n
			}
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

func (m *Model) pickerView(p *picker) string {
	var b strings.Builder
	bold := m.style(lipgloss.NewStyle().Bold(true))
	dim := m.style(lipgloss.NewStyle().Faint(true))
	hint := " (↑/↓, Enter, Esc; type to filter)"
	switch {
	case p.inline:
		hint = " (↑/↓, Enter runs, Tab completes, Esc closes)"
	case p.levels != nil:
		hint = " (↑/↓, ←/→ thinking, Enter, Esc; type to filter)"
	}
	b.WriteString(bold.Render(wrapText(p.title+hint, m.width)))
	b.WriteByte('\n')
	if p.levels != nil {
		l := p.levels[p.level]
		b.WriteString(wrapText("thinking: ‹ "+l.Name+" › "+dim.Render(l.Desc), m.width))
		b.WriteByte('\n')
	}
	if p.filter != "" && !p.inline {
		b.WriteString(dim.Render(wrapText("filter: "+p.filter, m.width)))
		b.WriteByte('\n')
	}
	items := p.shown()
	if len(items) == 0 {
		b.WriteString(dim.Render("  nothing matches"))
		b.WriteByte('\n')
	}
	// Notes line up after the widest label of the whole list, so the column
	// does not move as the filter narrows it.
	col := 0
	for _, it := range p.items {
		col = max(col, ansi.StringWidth(it.head()))
	}
	// The window of rows follows the selection.
	from := max(0, min(p.sel-pickerRows+1, len(items)-pickerRows))
	for i := from; i < min(len(items), from+pickerRows); i++ {
		it := items[i]
		mark := "  "
		if i == p.sel {
			mark = "› "
		}
		line := mark + it.head()
		if it.note != "" {
			line += strings.Repeat(" ", col-ansi.StringWidth(it.head())+2) + it.note
		}
		line = ansi.Truncate(line, max(m.width, 1), "…")
		if i == p.sel {
			line = bold.Render(line)
		} else if it.note != "" {
			line = dim.Render(line)
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
		title := oneLine(in.Name(), 60)
		if title == "" {
			title = "(no prompt yet)"
		}
		p.items = append(p.items, pickItem{label: fmt.Sprintf("%s  %s  %s", title, age(now.Sub(in.Updated)), in.ID), value: in.ID})
	}
	return p
}

// modelPicker offers the models /model accepts (the host's list, the editor's
// picker's), the current one marked, and the host's thinking levels, the
// current one chosen: Enter sets both, through /model NAME THINKING.
func (m *Model) modelPicker(list []host.Model) *picker {
	p := &picker{title: "Which model?", levels: host.ThinkingLevels}
	p.choose = func(id string) tea.Cmd { return m.command("/model " + id + " " + p.levels[p.level].Value) }
	cur := m.status.Model
	for i, in := range list {
		var note []string
		if in.Name != "" && in.Name != in.ID {
			note = append(note, in.Name)
		}
		if in.ContextWindow > 0 {
			note = append(note, tokens(in.ContextWindow)+" context")
		}
		p.items = append(p.items, pickItem{label: in.ID, value: in.ID, note: strings.Join(note, " · "), current: in.ID == cur})
		if in.ID == cur {
			p.sel = i
		}
	}
	think := m.status.Thinking
	if think == "" {
		think = host.ThinkingDefault
	}
	p.level = slices.IndexFunc(p.levels, func(l host.ThinkingLevel) bool { return l.Value == think })
	if p.level < 0 { // a token budget from the configuration
		p.levels = append(slices.Clip(p.levels), host.ThinkingLevel{Value: think, Name: think + " tokens", Desc: "as configured"})
		p.level = len(p.levels) - 1
	}
	return p
}

// rewindPicker offers the session's changes, newest first; the one chosen,
// what goes back to before it: a prompt's files (code), its conversation (a
// new session that forks before it) or both; an undo's, its files.
func (m *Model) rewindPicker(points []host.Point) *picker {
	prompt := map[string]bool{}
	p := &picker{title: "Go back to before which change?"}
	p.choose = func(n string) tea.Cmd {
		if !prompt[n] {
			return m.command("/rewind " + n)
		}
		m.picker = &picker{title: "Go back to before change " + n + ": what?",
			choose: func(what string) tea.Cmd { return m.command("/rewind " + n + " " + what) },
			items: []pickItem{
				{label: "code", value: "code", note: "put the files back as they were; the conversation goes on"},
				{label: "conversation", value: "conversation", note: "go on in a new session from before it; the files stay"},
				{label: "both", value: "both", note: "the files back, and a new session from before it"},
			}}
		return nil
	}
	for _, pt := range slices.Backward(points) {
		prompt[strconv.Itoa(pt.N)] = pt.Prompt > 0
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
