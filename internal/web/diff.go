package web

import (
	"strconv"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/diffview"
)

// diffView is one FileDiff as unified-diff rows. Result-time hunks are Numbered:
// they carry a range header and old/new line numbers.
type diffView struct {
	Path     string
	ShowPath bool // the first hunk of a file
	New      bool // a created file: every line is inserted
	Numbered bool
	Header   string // "@@ -3,4 +3,5 @@"
	Head     []diffRow
	Tail     []diffRow
	Fold     *foldView
	Ins, Del int
	// FileIns and FileDel count the file's hunks from this one on; shown with
	// the path.
	FileIns, FileDel int
}

// diffRow is one line of a hunk. Old and New are its line numbers ("" where the
// line has none); Op is its class: ctx, del or ins.
type diffRow struct {
	Op, Sign, Old, New, Text string
}

func (b *builder) diffs(callID string, ds []card.FileDiff, numbered bool) []diffView {
	out := make([]diffView, len(ds))
	for i, d := range ds {
		lines := diffview.Lines(d)
		rows := hunkRows(lines)
		v := diffView{Path: d.Path, ShowPath: i == 0 || ds[i-1].Path != d.Path, New: d.OldText == nil, Numbered: numbered}
		v.Ins, v.Del = diffview.Stat(lines)
		if numbered {
			v.Header = diffview.Header(d, lines)
		} else {
			for j := range rows {
				rows[j].Old, rows[j].New = "", ""
			}
		}
		head, hidden := b.fold(len(rows))
		var clipped bool
		v.Head, clipped = clipRows(rows[:head], b.full)
		if hidden > 0 {
			var c2 bool
			v.Tail, c2 = clipRows(rows[head+hidden:], b.full)
			clipped = clipped || c2
		}
		if hidden > 0 || clipped {
			v.Fold = &foldView{Hidden: hidden, Clipped: clipped, Src: b.src(callID)}
		}
		out[i] = v
	}
	for i := len(out) - 1; i >= 0; i-- {
		out[i].FileIns, out[i].FileDel = out[i].Ins, out[i].Del
		if i+1 < len(out) && !out[i+1].ShowPath {
			out[i].FileIns += out[i+1].FileIns
			out[i].FileDel += out[i+1].FileDel
		}
	}
	return out
}

// hunkRows turns a hunk's lines into table rows.
func hunkRows(lines []diffview.Line) []diffRow {
	out := make([]diffRow, len(lines))
	for i, l := range lines {
		r := diffRow{Op: "ctx", Sign: " ", Text: l.Text}
		switch l.Op {
		case diffview.Delete:
			r.Op, r.Sign = "del", "-"
		case diffview.Insert:
			r.Op, r.Sign = "ins", "+"
		case diffview.Context:
		}
		if l.Old > 0 {
			r.Old = strconv.Itoa(l.Old)
		}
		if l.New > 0 {
			r.New = strconv.Itoa(l.New)
		}
		out[i] = r
	}
	return out
}

func clipRows(rows []diffRow, full bool) ([]diffRow, bool) {
	if full {
		return rows, false
	}
	clipped := false
	for i := range rows {
		if len(rows[i].Text) > maxLineRunes {
			if c := clip(rows[i].Text, maxLineRunes); c != rows[i].Text {
				rows[i].Text, clipped = c, true
			}
		}
	}
	return rows, clipped
}
