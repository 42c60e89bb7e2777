package termui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/diffview"
)

// diffStat counts inserted and deleted lines over a card's hunks.
func diffStat(hunks [][]diffview.Line) (ins, del int) {
	for _, h := range hunks {
		i, d := diffview.Stat(h)
		ins += i
		del += d
	}
	return ins, del
}

func statSpans(ins, del int) []span {
	return []span{{sgrGreen, "+" + strconv.Itoa(ins)}, {"", " "}, {sgrRed, "−" + strconv.Itoa(del)}}
}

func opStyle(o diffview.Op) (sign, sgr string) {
	switch o {
	case diffview.Delete:
		return "-", sgrRed
	case diffview.Insert:
		return "+", sgrGreen
	case diffview.Context:
	}
	return " ", ""
}

// diffRows draws the diffs of a card. numbered adds the hunk headers and the old/new
// line-number gutter of result-time hunks.
func (r *Renderer) diffRows(diffs []card.FileDiff, hunks [][]diffview.Line, numbered bool) []row {
	var oldW, newW int
	for _, h := range hunks {
		for _, l := range h {
			oldW = max(oldW, len(strconv.Itoa(l.Old)))
			newW = max(newW, len(strconv.Itoa(l.New)))
		}
	}
	var rows []row
	for i, d := range diffs {
		if i == 0 || d.Path != diffs[i-1].Path {
			head := []span{{sgrBold, r.path(d.Path)}}
			if d.OldText == nil {
				head = append(head, span{sgrDim, " (new file)"})
			}
			rows = append(rows, row{prefix: []span{{"", indent}}, body: head})
		}
		if numbered {
			rows = append(rows, textRow([]span{{"", indent}}, sgrCyan, diffview.Header(d, hunks[i])))
		}
		var colored [][]span
		if r.color {
			colored = highlightHunk(d.Path, hunks[i])
		}
		body := make([]row, 0, len(hunks[i]))
		for j, l := range hunks[i] {
			sign, sgr := opStyle(l.Op)
			prefix := []span{{"", indent}}
			if numbered {
				prefix = append(prefix, span{sgrDim, num(l.Old, oldW) + " " + num(l.New, newW) + " "})
			}
			prefix = append(prefix, span{sgr, sign + " "})
			if colored != nil {
				body = append(body, row{prefix: prefix, body: onBackground(colored[j], l.Op)})
			} else {
				body = append(body, textRow(prefix, sgr, l.Text))
			}
		}
		rows = append(rows, r.foldRows(body)...)
	}
	return rows
}

// Backgrounds of highlighted changed lines (xterm 256 colours: a dark red
// and a dark green), so the code keeps its colours and the change still shows.
const (
	sgrDeletedBG  = "48;5;52"
	sgrInsertedBG = "48;5;22"
)

// highlightHunk colours a hunk's code as the language of path: the old side
// (context and deleted lines) and the new side (context and inserted lines)
// are each tokenised whole, so a construct spanning lines is coloured as in
// the file. It returns one span list per line, or nil when the language is
// not known.
func highlightHunk(path string, lines []diffview.Line) [][]span {
	var oldIdx, newIdx []int
	var oldText, newText []string
	for i, l := range lines {
		text := strings.TrimSuffix(l.Text, "\r")
		if l.Op != diffview.Insert {
			oldIdx, oldText = append(oldIdx, i), append(oldText, text)
		}
		if l.Op != diffview.Delete {
			newIdx, newText = append(newIdx, i), append(newText, text)
		}
	}
	lang := filepath.Base(path)
	out := make([][]span, len(lines))
	for _, side := range []struct {
		idx  []int
		text []string
	}{{oldIdx, oldText}, {newIdx, newText}} {
		if len(side.text) == 0 {
			continue
		}
		colored := highlight(lang, side.text)
		if colored == nil {
			return nil
		}
		for k, i := range side.idx {
			out[i] = colored[k]
		}
	}
	return out
}

// onBackground puts a changed line's spans on its background.
func onBackground(spans []span, o diffview.Op) []span {
	bg := ""
	switch o {
	case diffview.Delete:
		bg = sgrDeletedBG
	case diffview.Insert:
		bg = sgrInsertedBG
	case diffview.Context:
		return spans
	}
	out := make([]span, len(spans))
	for i, s := range spans {
		out[i] = span{bg, s.text}
		if s.sgr != "" {
			out[i].sgr = bg + ";" + s.sgr
		}
	}
	return out
}

// num right-aligns n in w columns, blank for 0.
func num(n, w int) string {
	if n == 0 {
		return fmt.Sprintf("%*s", w, "")
	}
	return fmt.Sprintf("%*d", w, n)
}

func allHunks(diffs []card.FileDiff) [][]diffview.Line {
	hunks := make([][]diffview.Line, len(diffs))
	for i, d := range diffs {
		hunks[i] = diffview.Lines(d)
	}
	return hunks
}
