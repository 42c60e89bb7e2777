package chat

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
)

// askBox is a tool's question on screen (the plan's "Implement this plan?",
// ask_user): its call card, the choices to pick with ↑/↓ and Enter or their
// number, and, where the question takes one, the user's own answer typed in.
// Esc answers none.
type askBox struct {
	q    *host.Question
	card string // the call card: the plan, the question
	sel  int
	text string // the user's own answer so far
}

type askDoneMsg struct{ q *host.Question }

// showQuestion puts a question on screen until it is answered or stops
// waiting.
func (m *Model) showQuestion(q *host.Question) tea.Cmd {
	m.ask = &askBox{q: q}
	if _, plain := q.Request.Card.(*card.QuestionCall); !plain { // the box says all a question's card does
		m.ask.card = renderApproval(q.Request.Card, m.termOpts())
	}
	m.permAt = m.cfg.Now() // keys typed ahead do not answer it either
	return tea.Batch(m.notify("dsh: "+toolName(q.Request.Tool)+" asks you a question"),
		func() tea.Msg { <-q.Done(); return askDoneMsg{q} })
}

// askKey answers the question with a key, or edits the answer being typed.
func (m *Model) askKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.ask
	req := a.q.Request.Question
	n := len(req.Choices)
	switch ks := k.String(); ks {
	case "up":
		if n > 0 {
			a.sel = (a.sel + n - 1) % n
		}
		return nil
	case "down":
		if n > 0 {
			a.sel = (a.sel + 1) % n
		}
		return nil
	case "esc":
		m.answer(card.Answer{})
		return nil
	case "backspace":
		if r := []rune(a.text); len(r) > 0 {
			a.text = string(r[:len(r)-1])
		}
		return nil
	case "enter":
		switch {
		case a.text != "":
			m.answer(card.Answer{Text: a.text})
		case n > 0:
			c := req.Choices[a.sel]
			m.answer(card.Answer{ID: c.ID, Text: c.Label})
		}
		return nil
	}
	if k.Text == "" || k.Mod&^tea.ModShift != 0 {
		return nil
	}
	if i, err := strconv.Atoi(k.Text); err == nil && a.text == "" && i >= 1 && i <= n {
		c := req.Choices[i-1]
		m.answer(card.Answer{ID: c.ID, Text: c.Label})
		return nil
	}
	if req.FreeText {
		a.text += k.Text
	}
	return nil
}

func (m *Model) answer(a card.Answer) {
	m.ask.q.Answer(a)
	m.ask = nil
}

func (m *Model) askView() string {
	a := m.ask
	req := a.q.Request.Question
	bold := m.style(lipgloss.NewStyle().Bold(true))
	dim := m.style(lipgloss.NewStyle().Faint(true))
	var b strings.Builder
	b.WriteString(a.card)
	b.WriteString(bold.Render(wrapText(req.Text, m.width)))
	b.WriteByte('\n')
	for i, c := range req.Choices {
		mark := "  "
		if i == a.sel && a.text == "" {
			mark = "› "
		}
		line := mark + strconv.Itoa(i+1) + ". " + c.Label
		if c.Description != "" {
			line += " — " + c.Description
		}
		line = wrapText(line, m.width)
		if mark != "  " {
			line = bold.Render(line)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	help := "↑/↓ and Enter, or the number; Esc: no answer"
	if req.FreeText {
		help = "↑/↓ and Enter, the number, or type your own answer; Esc: no answer"
		if a.text != "" {
			b.WriteString(bold.Render(wrapText("› your answer: "+a.text, m.width)))
			b.WriteByte('\n')
		}
	}
	b.WriteString(dim.Render(wrapText(help, m.width)))
	b.WriteByte('\n')
	return b.String()
}
