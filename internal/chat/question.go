package chat

import (
	"fmt"
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
	card []string // the call card's rows (a plan); none for a question, which the box says
	sel  int
	text string // the user's own answer so far
}

type askDoneMsg struct{ q *host.Question }

// showQuestion puts a question on screen until it is answered or stops
// waiting.
func (m *Model) showQuestion(q *host.Question) tea.Cmd {
	m.hold(q.Request.CallID)
	m.ask = &askBox{q: q, card: m.askCard(q)}
	m.permAt, m.accepted = m.cfg.Now(), false // keys typed ahead do not answer it either
	return tea.Batch(m.notify("dsh: "+toolName(q.Request.Tool)+" asks you a question"),
		func() tea.Msg { <-q.Done(); return askDoneMsg{q} })
}

// askCard is the rows of the card a question is about (a plan): a plain
// question's card says nothing its box does not.
func (m *Model) askCard(q *host.Question) []string {
	if _, plain := q.Request.Card.(*card.QuestionCall); plain {
		return nil
	}
	return bodyLines(renderApproval(q.Request.Card, m.boxOpts()))
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
	case "ctrl+e":
		if a.card != nil {
			m.openReview(req.Text, bodyLines(renderApproval(a.q.Request.Card, m.reviewOpts())))
		}
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
	m.unbox()
}

func (m *Model) askView() string {
	a := m.ask
	req := a.q.Request.Question
	bold := m.style(lipgloss.NewStyle().Bold(true))
	dim := m.style(lipgloss.NewStyle().Faint(true))
	w := max(m.width-4, 20)
	var choices []string
	for i, c := range req.Choices {
		mark := "  "
		if i == a.sel && a.text == "" {
			mark = "› "
		}
		line := mark + strconv.Itoa(i+1) + ". " + c.Label
		if c.Description != "" {
			line += " — " + c.Description
		}
		for j, l := range bodyLines(wrapText(line, w-5)) {
			if j > 0 {
				l = "     " + l // under the choice's text
			}
			if mark != "  " {
				l = bold.Render(l)
			}
			choices = append(choices, l)
		}
	}
	keys := "↑/↓ Enter or a number · Esc: no answer"
	if req.FreeText {
		keys = "↑/↓ Enter or a number, or type your answer · Esc: none"
		if a.text != "" {
			choices = append(choices, bodyLines(bold.Render(wrapText("› your answer: "+a.text, w)))...)
		}
	}
	body := a.card
	title, more, _ := strings.Cut(req.Text, "\n")
	if body == nil { // a question: it heads the box, the choices under it
		title = "Question"
		body = bodyLines(bold.Render(wrapText(req.Text, w)))
	} else {
		keys += " · Ctrl-E: review all"
		// Its first line heads the box; the rest (a form's fields) comes
		// before the call's card.
		if more = strings.TrimSpace(more); more != "" {
			body = append(append(bodyLines(wrapText(more, w)), ""), body...)
		}
	}
	rows := m.boxRows(keys)
	if room := rows - len(choices) - 1; len(body) > room {
		cut := max(room-1, 0)
		body = append(body[:cut:cut], dim.Render(fmt.Sprintf("… %d more rows: Ctrl-E to review all", len(body)-cut)))
	}
	if len(body) > 0 && len(choices) > 0 {
		body = append(body, "")
	}
	return m.box(title, append(body, choices...), keys, max(rows, len(body)+len(choices)))
}
