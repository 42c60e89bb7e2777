// Package diffview lines up the old and new text of a diff card for display,
// so that the terminal and the web page number and mark a hunk the same way.
// It is pure, like the presenters.
package diffview

import (
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/dsh-dev/dsh/internal/card"
)

// Op says how a line of a hunk changed.
type Op int

// The ops.
const (
	Context Op = iota
	Delete
	Insert
)

// Line is one display line of a hunk with its 1-based numbers in the old and new
// text (0 where it has none). Text has no line ending.
type Line struct {
	Op       Op
	Text     string
	Old, New int
}

// Lines lines up a FileDiff's old and new text. A nil OldText is a new file:
// every line is inserted. Numbers count from OldStart and NewStart, or from 1
// when they are zero (a call-time diff knows no positions).
func Lines(d card.FileDiff) []Line {
	oldN, newN := max(d.OldStart, 1), max(d.NewStart, 1)
	var out []Line
	add := func(o Op, text string) {
		for _, l := range split(text) {
			dl := Line{Op: o, Text: l}
			if o != Insert {
				dl.Old = oldN
				oldN++
			}
			if o != Delete {
				dl.New = newN
				newN++
			}
			out = append(out, dl)
		}
	}
	if d.OldText == nil {
		add(Insert, d.NewText)
		return out
	}
	old := *d.OldText
	pos := 0
	for _, e := range udiff.Lines(old, d.NewText) {
		add(Context, old[pos:e.Start])
		add(Delete, old[e.Start:e.End])
		add(Insert, e.New)
		pos = e.End
	}
	add(Context, old[pos:])
	return out
}

// Hunks cuts a diff of two whole texts into the hunks that change, each with
// up to context unchanged lines around it, as diffs of the same path that
// start where their lines are: a one-line change in a long file reads as that
// line, not the file. A created file stays whole.
func Hunks(d card.FileDiff, context int) []card.FileDiff {
	if d.OldText == nil {
		return []card.FileDiff{d}
	}
	lines := Lines(d)
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.Op != Context {
			for j := max(i-context, 0); j <= min(i+context, len(lines)-1); j++ {
				keep[j] = true
			}
		}
	}
	var out []card.FileDiff
	oldN, newN := max(d.OldStart, 1), max(d.NewStart, 1) // the numbers of the next line of each side
	for i := 0; i < len(lines); {
		if !keep[i] {
			oldN, newN = oldN+1, newN+1 // an unchanged line is on both sides
			i++
			continue
		}
		h := card.FileDiff{Path: d.Path, OldStart: oldN, NewStart: newN}
		var old, nw strings.Builder
		for ; i < len(lines) && keep[i]; i++ {
			if l := lines[i]; l.Op != Insert {
				old.WriteString(l.Text + "\n")
				oldN++
			}
			if l := lines[i]; l.Op != Delete {
				nw.WriteString(l.Text + "\n")
				newN++
			}
		}
		h.OldText, h.NewText = card.Ptr(old.String()), nw.String()
		out = append(out, h)
	}
	if len(out) == 0 { // no change: the diff as it was
		return []card.FileDiff{d}
	}
	return out
}

// Stat counts the inserted and deleted lines.
func Stat(lines []Line) (ins, del int) {
	for _, l := range lines {
		switch l.Op {
		case Insert:
			ins++
		case Delete:
			del++
		case Context:
		}
	}
	return ins, del
}

// Header is the unified-diff range line "@@ -a,b +c,d @@" of a hunk. An empty
// side starts at the line before it, as in unified diffs ("-0,0" for a created
// file).
func Header(d card.FileDiff, lines []Line) string {
	var oldC, newC int
	for _, l := range lines {
		if l.Op != Insert {
			oldC++
		}
		if l.Op != Delete {
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
	return "@@ -" + strconv.Itoa(oldS) + "," + strconv.Itoa(oldC) + " +" + strconv.Itoa(newS) + "," + strconv.Itoa(newC) + " @@"
}

// split splits text into lines without their endings ("\n" or "\r\n"); "" has none.
func split(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
