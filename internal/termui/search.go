package termui

import (
	"net/url"
	"path"
	"strconv"

	"github.com/dsh-dev/dsh/internal/card"
)

// sgrMatch marks the matched text of a search line.
const sgrMatch = "1;31"

// searchResult draws a search card: matches grouped under their file, each
// match's text highlighted, or a list of paths. With colour on, a file's name and
// a match's line number are OSC 8 hyperlinks (file://…, #L<line> for the line),
// which terminals that support them open; the rest ignore them.
func (r *Renderer) searchResult(s *card.SearchResult) []row {
	var rows []row
	head := s.Title
	if head == "" {
		head = plural(s.Total, "result")
	}
	rows = append(rows, textRow(indented, sgrDim, head))
	var body []row
	for _, f := range s.Files {
		uri := fileURI(s.Dir, f.Path)
		name := []span{{sgrBold, f.Path}}
		if len(f.Matches) == 0 {
			name = append(name, span{sgrDim, ": " + plural(f.Count, "matching line")})
		}
		body = append(body, row{prefix: indented, body: name, link: uri})
		gw := 1
		if n := len(f.Matches); n > 0 {
			gw = len(strconv.Itoa(f.Matches[n-1].Line))
		}
		prev := 0
		for _, m := range f.Matches {
			if prev > 0 && m.Line > prev+1 {
				body = append(body, textRow([]span{{"", indent + indent}}, sgrDim, "⋮"))
			}
			prev = m.Line
			num := strconv.Itoa(m.Line)
			for len(num) < gw {
				num = " " + num
			}
			mark, sgr := " │ ", sgrDim
			if m.Ranges != nil {
				mark, sgr = " : ", ""
			}
			body = append(body, row{
				prefix:    []span{{"", indent + indent}, {sgrDim, num}, {sgrDim, mark}},
				prefixURI: map[int]string{1: uri + "#L" + strconv.Itoa(m.Line)},
				body:      matchSpans(m, sgr),
			})
		}
	}
	for _, p := range s.Paths {
		body = append(body, row{prefix: indented, body: []span{{"", p}}, link: fileURI(s.Dir, p)})
	}
	rows = append(rows, r.foldRows(body)...)
	if s.Truncated {
		rows = append(rows, textRow(indented, sgrDim, "(more not shown: "+plural(s.Total, "result")+" in all)"))
	}
	return rows
}

// matchSpans splits a line at its match ranges, the matches highlighted. A
// decoded card's ranges are valid; one built by hand may not be, and a range out
// of order or outside the text is not highlighted.
func matchSpans(m card.SearchMatch, sgr string) []span {
	var out []span
	at := 0
	for _, rg := range m.Ranges {
		if rg[0] < at || rg[1] <= rg[0] || rg[1] > len(m.Text) {
			continue
		}
		if rg[0] > at {
			out = append(out, span{sgr, m.Text[at:rg[0]]})
		}
		out = append(out, span{sgrMatch, m.Text[rg[0]:rg[1]]})
		at = rg[1]
	}
	if at < len(m.Text) || len(out) == 0 {
		out = append(out, span{sgr, m.Text[at:]})
	}
	return out
}

// fileURI is the file:// URL of p (relative to dir unless absolute). Every byte
// a terminal could read as control is percent-encoded, so a hostile path cannot
// end the escape sequence it is written in.
func fileURI(dir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
