package chat

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
)

// The / palette: typing / at the start of the input opens the list of the
// slash commands (the session's table, host.Session.CommandsFor: the list the editor is
// sent), each with its description; what follows the slash filters it, fuzzy,
// as the other pickers do. The input keeps the keys; ↑/↓ move, Enter runs the
// command (or, when it needs an argument, puts it in the input for one), Tab
// completes it, Esc closes the list.

// updatePalette opens or refilters the palette for the input v ("/" and the
// start of a name).
func (m *Model) updatePalette(v string) {
	cmds := m.commands()
	if m.paletteShut || len(cmds) == 0 {
		m.palette = nil
		return
	}
	if m.palette == nil {
		m.palette = &picker{title: "Commands", inline: true}
		for _, c := range cmds {
			note := c.Description
			if c.ArgHint != "" { // after the description, which matters more where the line is cut
				note += "  " + c.ArgHint
			}
			m.palette.items = append(m.palette.items, pickItem{label: "/" + c.Name, value: c.Name, note: note})
		}
	}
	if f := v[1:]; f != m.palette.filter {
		m.palette.filter, m.palette.sel = f, 0
	}
}

// paletteKey handles the keys the open palette takes; ok is false for the
// others, which go to the input.
func (m *Model) paletteKey(ks string) (tea.Cmd, bool) {
	p := m.palette
	items := p.shown()
	switch ks {
	case "up", "down":
		if n := len(items); n > 0 {
			if ks == "up" {
				p.sel = (p.sel + n - 1) % n
			} else {
				p.sel = (p.sel + 1) % n
			}
		}
		return nil, true
	case "esc":
		m.palette, m.paletteShut = nil, true
		return nil, true
	case "tab", "enter":
		if len(items) == 0 {
			m.palette = nil
			return nil, ks == "tab" // Enter sends what was typed: the host says it is unknown
		}
		c := m.findCommand(items[p.sel].value)
		m.palette = nil
		if ks == "tab" || needsArgs(c) {
			m.input.SetValue("/" + c.Name + " ")
			return nil, true
		}
		m.input.SetValue("/" + c.Name)
		return m.submit(), true
	}
	return nil, false
}

// needsArgs says a command wants an argument to run: its hint is not one of
// optional ones ("[focus]").
func needsArgs(c host.Command) bool {
	return c.ArgHint != "" && !strings.HasPrefix(c.ArgHint, "[")
}

// findCommand is the offered command named name.
func (m *Model) findCommand(name string) host.Command {
	for _, c := range m.commands() {
		if c.Name == name {
			return c
		}
	}
	return host.Command{Name: name}
}
