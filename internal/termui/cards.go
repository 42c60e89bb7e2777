package termui

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
)

var errNilCard = errors.New("termui: nil card")

// bullet starts a call card.
const bullet = "● "

// callRows draws a call card. Every variant has its arm; there is no default, so the
// lint gate fails here when the union grows.
func (r *Renderer) callRows(c card.Call) ([]row, error) {
	switch c := c.(type) {
	case *card.GenericCall:
		if c != nil {
			return r.genericCall(c), nil
		}
	case *card.TerminalCall:
		if c != nil {
			return r.terminalCall(c), nil
		}
	case *card.DiffCall:
		if c != nil {
			return r.diffCall(c), nil
		}
	case *card.PlanCall:
		if c != nil {
			return r.planCall(c), nil
		}
	case *card.QuestionCall:
		if c != nil {
			return r.questionCall(c), nil
		}
	case *card.TaskCall:
		if c != nil {
			return r.taskCall(c), nil
		}
	}
	return nil, errNilCard
}

// resultRows draws a result card; isError reddens a generic card's content.
func (r *Renderer) resultRows(res card.Result, isError bool) ([]row, error) {
	switch res := res.(type) {
	case *card.GenericResult:
		if res != nil {
			return r.genericResult(res, isError), nil
		}
	case *card.TerminalResult:
		if res != nil {
			return r.terminalResult(res), nil
		}
	case *card.ReadResult:
		if res != nil {
			return r.readResult(res), nil
		}
	case *card.DiffResult:
		if res != nil {
			return r.diffResult(res), nil
		}
	case *card.SearchResult:
		if res != nil {
			return r.searchResult(res), nil
		}
	case *card.PlanResult:
		if res != nil {
			return r.planResult(res), nil
		}
	case *card.QuestionResult:
		if res != nil {
			return r.questionResult(res), nil
		}
	case *card.TaskResult:
		if res != nil {
			return r.taskResult(res), nil
		}
	}
	return nil, errNilCard
}

func (r *Renderer) bodySGR(isError bool) string {
	if isError {
		return sgrRed
	}
	return sgrDim
}

var indented = []span{{"", indent}}

func (r *Renderer) genericCall(c *card.GenericCall) []row {
	// The tool kind (execute, think) is for editors choosing an icon, not for a reader.
	head := []span{{sgrDim, c.Title}}
	rows := []row{{prefix: []span{{sgrDim, bullet}}, body: head}}
	for _, l := range c.Locations {
		if strings.Contains(c.Title, r.path(l.Path)) {
			continue // the title names it; where the window starts, the result says
		}
		rows = append(rows, textRow(indented, sgrDim, "→ "+location(l)))
	}
	rows = append(rows, r.contentRows(c.Content, sgrDim)...)
	if len(c.Content) == 0 && len(c.RawInput) > 0 {
		rows = append(rows, textRow(indented, sgrDim, compactJSON(c.RawInput)))
	}
	return rows
}

func location(l card.Location) string {
	if l.Line == nil {
		return l.Path
	}
	return l.Path + ":" + strconv.Itoa(*l.Line)
}

// compactJSON puts a raw input on one line; the row cuts it to the width.
func compactJSON(v card.RawJSON) string {
	c := v.Clone()
	if err := c.Compact(); err != nil {
		return string(v)
	}
	return string(c)
}

// contentRows draws content blocks: text folded, images as a one-line summary.
func (r *Renderer) contentRows(content []card.Content, sgr string) []row {
	var rows []row
	for _, c := range content {
		switch c.Type {
		case card.ContentText:
			var body []row
			for _, l := range splitLines(c.Text) {
				rw := textRow(indented, sgr, l)
				if webLink(l) {
					// Wrapped at the width, it still opens whole (OSC 8): a
					// sign-in's link.
					rw.link = l
				}
				body = append(body, rw)
			}
			rows = append(rows, r.foldRows(body)...)
		case card.ContentImage:
			rows = append(rows, textRow(indented, sgr,
				fmt.Sprintf("[image %s, %s]", c.MimeType, plural(base64Len(c.Data), "byte"))))
		case card.ContentResource:
			rows = append(rows, textRow(indented, sgr, attach.Chip(c.URI, c.Text)))
		case card.ContentPaste:
			rows = append(rows, textRow(indented, sgr, attach.PasteChip(c.Text)))
		case card.ContentExpansion:
			rows = append(rows, textRow(indented, sgr, attach.ExpansionChip(c.URI, c.Text)))
		default:
			rows = append(rows, textRow(indented, sgr, "["+string(c.Type)+" block]"))
		}
	}
	return rows
}

// webLink says whether a line is a web link alone, with nothing in it that
// could end the hyperlink sequence it goes in.
func webLink(l string) bool {
	if !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://") {
		return false
	}
	for _, c := range []byte(l) {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// base64Len is the decoded size of standard base64 data.
func base64Len(data string) int {
	n := len(strings.TrimRight(data, "="))
	return n * 3 / 4
}

func (r *Renderer) genericResult(g *card.GenericResult, isError bool) []row {
	var rows []row
	if g.Title != "" {
		rows = append(rows, textRow(indented, r.bodySGR(isError), g.Title))
	}
	return append(rows, r.contentRows(g.Content, r.bodySGR(isError))...)
}

func (r *Renderer) terminalCall(t *card.TerminalCall) []row {
	var rows []row
	if t.Description != "" {
		rows = append(rows, textRow(nil, sgrDim, t.Description))
	}
	var cmd []row
	for i, l := range splitLines(t.Title) {
		mark := "  "
		if i == 0 {
			mark = "$ "
		}
		cmd = append(cmd, textRow([]span{{"", indent}, {sgrBold, mark}}, sgrBold, l))
	}
	rows = append(rows, r.foldRows(cmd)...)
	if t.Cwd != "" {
		rows = append(rows, textRow(indented, sgrDim, "in "+t.Cwd))
	}
	if len(rows) == 0 {
		rows = append(rows, textRow(indented, sgrBold, "$"))
	}
	// The bullet takes the place of the first row's indent.
	rows[0].prefix = append([]span{{sgrBold, bullet}}, trimIndent(rows[0].prefix)...)
	return rows
}

func trimIndent(p []span) []span {
	if len(p) > 0 && p[0] == (span{"", indent}) {
		return p[1:]
	}
	return p
}

func (r *Renderer) terminalResult(t *card.TerminalResult) []row {
	var rows []row
	if t.Title != "" {
		rows = append(rows, textRow(indented, sgrDim, t.Title))
	}
	var out []row
	for _, l := range splitLines(t.Output) {
		out = append(out, textRow(indented, "", l))
	}
	head, hidden := r.fold(len(out))
	// The marker counts what is hidden of all the command wrote, not of the
	// start and end the tool kept of it.
	marker := foldRow(max(hidden, t.Lines-(len(out)-hidden)))
	switch {
	case r.live.folded:
		// Live output showed the head: the marker and the tail finish the fold.
		// A body too short to fold shows the lines after the head.
		if hidden > 0 {
			rows = append(append(rows, marker), out[head+hidden:]...)
		} else {
			rows = append(rows, out[min(r.foldHead, len(out)):]...)
		}
	case r.live.shown:
	case len(out) == 0:
		rows = append(rows, textRow(indented, sgrDim, "(no output)"))
	case hidden > 0:
		rows = append(append(append(rows, out[:head]...), marker), out[head+hidden:]...)
	default:
		rows = append(rows, out...)
	}
	status, sgr := exitStatus(t)
	rows = append(rows, textRow(indented, sgr, status))
	if sb := t.Sandbox; sb != nil {
		note := "sandboxed"
		if !sb.Network {
			note += ", network off"
		}
		rows = append(rows, textRow(indented, sgrDim, note))
		if sb.Refused != "" {
			rows = append(rows, textRow(indented, sgrRed, "refused by the sandbox: "+sb.Refused))
		}
	}
	return rows
}

// exitStatus says how a command ended: "exit 0" (green), "exit 2", "killed by
// SIGKILL", "timed out, killed by SIGKILL" (red).
func exitStatus(t *card.TerminalResult) (string, string) {
	var parts []string
	sgr := sgrRed
	if t.TimedOut {
		parts = append(parts, "timed out")
	}
	switch {
	case t.Signal != "":
		parts = append(parts, "killed by "+t.Signal)
	case t.ExitCode != nil:
		parts = append(parts, "exit "+strconv.Itoa(*t.ExitCode))
		if *t.ExitCode == 0 && !t.TimedOut {
			sgr = sgrGreen
		}
	}
	if len(parts) == 0 {
		return "exit status unknown", sgrDim
	}
	return strings.Join(parts, ", "), sgr
}

// highlightLeadIn is how many hidden lines before a folded read card's tail are
// tokenised with it, so that a construct open there (a block comment) colours the
// tail right.
const highlightLeadIn = 50

func (r *Renderer) readResult(rd *card.ReadResult) []row {
	rows := []row{{prefix: indented, body: []span{{sgrBold, r.path(rd.Path)}, {sgrDim, " · " + readWindow(rd)}}}}
	n := len(rd.Lines)
	if n == 0 {
		return rows
	}
	gw := len(strconv.Itoa(rd.Lines[n-1].Number))
	head, hidden := r.fold(n)
	// lines draws lines [from, to), tokenising from lead on. Only the lines left
	// after folding are cleaned and highlighted: lexing a whole 2000-line window to
	// show 30 of its lines would be most of the cost of drawing it.
	lines := func(lead, from, to int) {
		text := make([]string, to-lead)
		for i := range text {
			text[i], _ = clean(strings.TrimSuffix(rd.Lines[lead+i].Text, "\r"), 0)
		}
		var colored [][]span
		if r.color {
			colored = highlight(rd.Lang, text)
		}
		for i := from; i < to; i++ {
			prefix := []span{{"", indent}, {sgrDim, fmt.Sprintf("%*d │ ", gw, rd.Lines[i].Number)}}
			if colored != nil {
				rows = append(rows, row{prefix: prefix, body: colored[i-lead]})
			} else {
				rows = append(rows, textRow(prefix, "", text[i-lead]))
			}
		}
	}
	lines(0, 0, head)
	if hidden > 0 {
		rows = append(rows, foldRow(hidden))
		lines(max(head+hidden-highlightLeadIn, head), head+hidden, n)
	}
	return rows
}

// readWindow says which lines a read card shows, and where it starts even when a byte
// cap left its window empty.
func readWindow(rd *card.ReadResult) string {
	of := strconv.Itoa(rd.TotalLines)
	if rd.TotalLinesAtLeast {
		of = "at least " + of
	}
	switch {
	case len(rd.Lines) > 0:
		return fmt.Sprintf("lines %d–%d of %s", rd.Lines[0].Number, rd.Lines[len(rd.Lines)-1].Number, of)
	case rd.TotalLines == 0:
		return "empty file"
	case rd.Offset > rd.TotalLines:
		return fmt.Sprintf("line %d is past the end (%s)", rd.Offset, plural(rd.TotalLines, "line"))
	default:
		return fmt.Sprintf("from line %d of %s, no lines shown", rd.Offset, of)
	}
}

// diffCall is a proposed change's line: what and how much. Its hunks show once,
// in the approval box (Approval) and then as the result card, as applied.
func (r *Renderer) diffCall(d *card.DiffCall) []row {
	hunks := allHunks(d.Diffs)
	head := append([]span{{sgrBold, d.Title}, {"", "  "}}, statSpans(diffStat(hunks))...)
	return []row{{prefix: []span{{sgrBold, bullet}}, body: head}}
}

// diffResult is the change as applied, under its call's line, which already
// says what and how much: the hunks, not the title and counts again.
func (r *Renderer) diffResult(d *card.DiffResult) []row {
	rows := r.diffRows(d.Diffs, allHunks(d.Diffs), true)
	return append(rows, r.diagnosticRows(d.Diagnostics)...)
}
