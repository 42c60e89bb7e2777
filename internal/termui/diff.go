package termui

import (
	"fmt"
	"strconv"

	"github.com/aymanbagabas/go-udiff"

	"github.com/dsh-dev/dsh/internal/card"
)

type op int

const (
	opContext op = iota
	opDelete
	opInsert
)

// diffLine is one line of a rendered hunk with its 1-based numbers in the old and
// new text (0 where it has none).
type diffLine struct {
	op       op
	text     string
	old, new int
}

// hunkLines lines up a FileDiff's old and new text. A nil OldText is a new file: every
// line is inserted. Numbers count from OldStart and NewStart, or from 1 when they
// are zero (a call-time diff knows no positions; its numbers are not shown).
func hunkLines(d card.FileDiff) []diffLine {
	oldN, newN := max(d.OldStart, 1), max(d.NewStart, 1)
	var out []diffLine
	add := func(o op, text string) {
		for _, l := range splitLines(text) {
			dl := diffLine{op: o, text: l}
			if o != opInsert {
				dl.old = oldN
				oldN++
			}
			if o != opDelete {
				dl.new = newN
				newN++
			}
			out = append(out, dl)
		}
	}
	if d.OldText == nil {
		add(opInsert, d.NewText)
		return out
	}
	old := *d.OldText
	pos := 0
	for _, e := range udiff.Lines(old, d.NewText) {
		add(opContext, old[pos:e.Start])
		add(opDelete, old[e.Start:e.End])
		add(opInsert, e.New)
		pos = e.End
	}
	add(opContext, old[pos:])
	return out
}

// diffStat counts inserted and deleted lines.
func diffStat(hunks [][]diffLine) (ins, del int) {
	for _, h := range hunks {
		for _, l := range h {
			switch l.op {
			case opInsert:
				ins++
			case opDelete:
				del++
			case opContext:
			}
		}
	}
	return ins, del
}

func statSpans(ins, del int) []span {
	return []span{{sgrGreen, "+" + strconv.Itoa(ins)}, {"", " "}, {sgrRed, "−" + strconv.Itoa(del)}}
}

// hunkHeader is the unified-diff range line: "@@ -a,b +c,d @@". An empty side starts
// at the line before it, as in unified diffs ("-0,0" for a created file).
func hunkHeader(d card.FileDiff, lines []diffLine) string {
	var oldC, newC int
	for _, l := range lines {
		if l.op != opInsert {
			oldC++
		}
		if l.op != opDelete {
			newC++
		}
	}
	oldS, newS := max(d.OldStart, 1), max(d.NewStart, 1)
	if d.OldText == nil {
		oldS = 0
	}
	if oldC == 0 && oldS > 0 {
		oldS--
	}
	if newC == 0 && newS > 0 {
		newS--
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", oldS, oldC, newS, newC)
}

func opStyle(o op) (sign, sgr string) {
	switch o {
	case opDelete:
		return "-", sgrRed
	case opInsert:
		return "+", sgrGreen
	case opContext:
	}
	return " ", ""
}

// diffRows draws the diffs of a card. numbered adds the hunk headers and the old/new
// line-number gutter of result-time hunks.
func (r *Renderer) diffRows(diffs []card.FileDiff, hunks [][]diffLine, numbered bool) []row {
	var oldW, newW int
	for _, h := range hunks {
		for _, l := range h {
			oldW = max(oldW, len(strconv.Itoa(l.old)))
			newW = max(newW, len(strconv.Itoa(l.new)))
		}
	}
	var rows []row
	for i, d := range diffs {
		if i == 0 || d.Path != diffs[i-1].Path {
			head := []span{{sgrBold, d.Path}}
			if d.OldText == nil {
				head = append(head, span{sgrDim, " (new file)"})
			}
			rows = append(rows, row{prefix: []span{{"", indent}}, body: head})
		}
		if numbered {
			rows = append(rows, textRow([]span{{"", indent}}, sgrCyan, hunkHeader(d, hunks[i])))
		}
		body := make([]row, 0, len(hunks[i]))
		for _, l := range hunks[i] {
			sign, sgr := opStyle(l.op)
			prefix := []span{{"", indent}}
			if numbered {
				prefix = append(prefix, span{sgrDim, num(l.old, oldW) + " " + num(l.new, newW) + " "})
			}
			prefix = append(prefix, span{sgr, sign + " "})
			body = append(body, textRow(prefix, sgr, l.text))
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

func allHunks(diffs []card.FileDiff) [][]diffLine {
	hunks := make([][]diffLine, len(diffs))
	for i, d := range diffs {
		hunks[i] = hunkLines(d)
	}
	return hunks
}
