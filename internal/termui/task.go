package termui

import (
	"io"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
)

// A task's cards: the call names the subagent and what it was asked; its own
// calls are drawn by a Nested renderer under it; the result sums them up
// and shows the answer the parent model read.

func (r *Renderer) taskCall(c *card.TaskCall) []row {
	rows := []row{{prefix: []span{{sgrBold, bullet}}, body: []span{{sgrBold, c.Agent + ": "}, {"", c.Title}}}}
	return append(rows, r.contentRows([]card.Content{card.Text(strings.TrimSpace(c.Prompt))}, sgrDim)...)
}

func (r *Renderer) taskResult(c *card.TaskResult) []row {
	rows := []row{answerRow(c.Summary(), c.Stop == "end_turn")}
	if c.Text != "" {
		rows = append(rows, r.markdownIndented(c.Text)...)
	}
	return rows
}

// CallLine draws a call as one line, its title, marked when it failed: a
// collapsed subagent's call.
func (r *Renderer) CallLine(title string, failed bool) error {
	line := row{prefix: []span{{sgrDim, bullet}}, body: []span{{sgrDim, title}}}
	if failed {
		line.body = append(line.body, span{sgrRed, " ✗"})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = stream{}
	return r.attach([]row{line})
}

// nestPrefix starts every line a Nested renderer writes.
const nestPrefix = "  │ "

// Nested is a renderer for a subagent's cards under its task's card: every
// line it writes starts with a rule, and its width is what is left. It
// writes to the same terminal; its blocks are separated as this one's.
func (r *Renderer) Nested() *Renderer {
	r.mu.Lock()
	defer r.mu.Unlock()
	prefix := nestPrefix
	if r.color {
		prefix = "  \x1b[" + sgrDim + "m│\x1b[0m "
	}
	n := &Renderer{w: &prefixWriter{w: r.w, prefix: prefix, start: true}, color: r.color, width: max(r.width-width(nestPrefix), minWidth/2),
		foldAbove: r.foldAbove, foldHead: r.foldHead, foldTl: r.foldTl}
	n.root.Store(r.root.Load())
	return n
}

// prefixWriter puts prefix at the start of every line.
type prefixWriter struct {
	w      io.Writer
	prefix string
	start  bool // the next byte starts a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out strings.Builder
	for _, c := range b {
		if p.start && c != '\n' {
			out.WriteString(p.prefix)
		}
		if p.start && c == '\n' {
			out.WriteString(strings.TrimRight(p.prefix, " "))
		}
		out.WriteByte(c)
		p.start = c == '\n'
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
