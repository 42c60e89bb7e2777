package termui

import (
	"fmt"
	"strconv"

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
		body := make([]row, 0, len(hunks[i]))
		for _, l := range hunks[i] {
			sign, sgr := opStyle(l.Op)
			prefix := []span{{"", indent}}
			if numbered {
				prefix = append(prefix, span{sgrDim, num(l.Old, oldW) + " " + num(l.New, newW) + " "})
			}
			prefix = append(prefix, span{sgr, sign + " "})
			body = append(body, textRow(prefix, sgr, l.Text))
		}
		rows = append(rows, r.foldRows(body)...)
	}
	return rows
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
