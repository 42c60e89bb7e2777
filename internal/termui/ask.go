package termui

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/text"

	"github.com/dsh-dev/dsh/internal/card"
)

// The cards that ask the user: a plan to approve, a question to answer. The
// call card shows what is asked; the result card, drawn under it, only the
// answer.

func (r *Renderer) planCall(p *card.PlanCall) []row {
	rows := []row{{prefix: []span{{sgrBold, bullet}}, body: []span{{sgrBold, p.Title}}}}
	rows = append(rows, r.markdownIndented(untitled(p.Plan))...)
	if len(p.Files) > 0 {
		files := make([]string, len(p.Files))
		for i, f := range p.Files {
			files[i] = r.path(f)
		}
		rows = append(rows, row{}, textRow(indented, sgrDim, "Files: "+strings.Join(files, ", ")))
	}
	if len(p.Steps) > 0 {
		rows = append(rows, row{}, textRow(indented, sgrDim, "Steps:"))
	}
	for i, s := range p.Steps {
		rows = append(rows, row{prefix: []span{{"", indent + indent}, {sgrDim, strconv.Itoa(i+1) + ". "}}, body: []span{{"", s}}})
	}
	return rows
}

// untitled is a plan without its first line when that is a heading: the
// card's title already names it.
func untitled(plan string) string {
	t := strings.TrimLeft(plan, "\n")
	if first, rest, _ := strings.Cut(t, "\n"); strings.HasPrefix(strings.TrimSpace(first), "#") {
		return rest
	}
	return plan
}

// markdownIndented renders Markdown inside a card, under its title.
func (r *Renderer) markdownIndented(src string) []row {
	b := []byte(src)
	doc := mdParser().Parser().Parse(text.NewReader(b))
	m := mdWalker{r: r, src: b}
	m.blocks(doc, indented, indented)
	return m.rows
}

func (r *Renderer) planResult(p *card.PlanResult) []row {
	return []row{answerRow(p.Outcome(), p.Mode != "")}
}

func answerRow(text string, ok bool) row {
	sgr := sgrDim
	if ok {
		sgr = sgrGreen
	}
	return row{prefix: []span{{"", indent}, {sgr, "→ "}}, body: []span{{sgr, text}}}
}

func (r *Renderer) questionCall(q *card.QuestionCall) []row {
	rows := []row{{prefix: []span{{sgrBold, bullet}}, body: []span{{sgrBold, "? " + q.Question}}}}
	for i, c := range q.Choices {
		body := []span{{"", c.Label}}
		if c.Description != "" {
			body = append(body, span{sgrDim, " — " + c.Description})
		}
		rows = append(rows, row{prefix: []span{{"", indent}, {sgrDim, strconv.Itoa(i+1) + ". "}}, body: body})
	}
	return rows
}

func (r *Renderer) questionResult(q *card.QuestionResult) []row {
	if q.Answer.ID != "" || q.Answer.None() {
		return []row{answerRow(q.Outcome(), !q.Answer.None())}
	}
	// The user's own words may run over lines: each is a row of its own.
	rows := []row{answerRow("Your own answer:", true)}
	for _, l := range splitLines(q.Answer.Text) {
		rows = append(rows, textRow([]span{{"", indent + indent}}, "", l))
	}
	return rows
}
