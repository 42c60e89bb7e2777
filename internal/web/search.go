package web

import (
	"strconv"

	"github.com/dsh-dev/dsh/internal/card"
)

// searchView is a search card: matches grouped by file, or a list of paths. Each
// match has an anchor, and its line number links to that anchor on the call's
// own page, which shows the card unfolded: a link that can be followed, kept and
// shared, which nothing on the page can turn into a file read.
type searchView struct {
	Title, Query, Dir string
	Files             []searchFileView
	Paths             []string
	More              string // what is not shown, when cut
}

type searchFileView struct {
	Path  string
	Count int
	Lines []searchLineView
}

type searchLineView struct {
	ID, Href string
	Line     int
	Match    bool
	Gap      bool // lines were skipped before this one
	Parts    []searchPart
}

type searchPart struct {
	Text string
	Hit  bool
}

// maxSearchLines bounds the lines a folded search card shows.
const maxSearchLines = 200

func (b *builder) search(callID string, c *card.SearchResult) *searchView {
	v := &searchView{Title: c.Title, Query: c.Query, Dir: c.Dir, Paths: c.Paths}
	base := callElemID(callID)
	shown := 0
	for i, f := range c.Files {
		fv := searchFileView{Path: f.Path, Count: f.Count}
		prev := 0
		for _, m := range f.Matches {
			if !b.full && shown >= maxSearchLines {
				break
			}
			shown++
			id := base + "-f" + strconv.Itoa(i) + "-L" + strconv.Itoa(m.Line)
			fv.Lines = append(fv.Lines, searchLineView{
				ID: id, Href: b.callURL(callID) + "#" + id, Line: m.Line, Match: m.Ranges != nil,
				Gap: prev > 0 && m.Line > prev+1, Parts: searchParts(m),
			})
			prev = m.Line
		}
		v.Files = append(v.Files, fv)
	}
	if c.Truncated {
		v.More = "more not shown: " + strconv.Itoa(c.Total) + " in all"
	}
	return v
}

// searchParts splits a line at its match ranges, cut like any shown line. The
// decoded card's ranges are in order and inside the text; others are ignored.
func searchParts(m card.SearchMatch) []searchPart {
	var out []searchPart
	at := 0
	for _, rg := range m.Ranges {
		if rg[0] < at || rg[1] <= rg[0] || rg[1] > len(m.Text) || rg[0] >= maxLineRunes {
			continue
		}
		if rg[0] > at {
			out = append(out, searchPart{Text: m.Text[at:rg[0]]})
		}
		out = append(out, searchPart{Text: m.Text[rg[0]:rg[1]], Hit: true})
		at = rg[1]
	}
	if at < len(m.Text) {
		out = append(out, searchPart{Text: clip(m.Text[at:], max(maxLineRunes-at, 1))})
	}
	return out
}
