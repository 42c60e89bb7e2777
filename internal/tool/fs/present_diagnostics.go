package fs

import (
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
)

// diagnosticsCard shows problems as a search card: a file's problems are its
// matching lines, each "severity: message [source]" with the severity
// marked, several on one line joined. It returns nil when the diagnostics
// are not grouped by file in position order.
func diagnosticsCard(query string, m *diagnosticsMeta) *card.SearchResult {
	if query == "" {
		query = "."
	}
	c := &card.SearchResult{Title: "Diagnostics", Query: query, Dir: m.Dir, Files: []card.SearchFile{}}
	seen := map[string]bool{}
	lines := 0
	for _, d := range m.Diagnostics {
		n := len(c.Files)
		if n == 0 || c.Files[n-1].Path != d.Path {
			if seen[d.Path] || d.Path == "" {
				return nil
			}
			seen[d.Path] = true
			c.Files = append(c.Files, card.SearchFile{Path: d.Path})
			n++
		}
		f := &c.Files[n-1]
		text := string(d.Severity) + ": " + firstLine(d.Message)
		if d.Source != "" {
			text += " [" + d.Source + "]"
		}
		k := len(f.Matches)
		switch {
		case k > 0 && f.Matches[k-1].Line == d.Line:
			mt := &f.Matches[k-1]
			start := len(mt.Text) + 2
			mt.Text += "; " + text
			mt.Ranges = append(mt.Ranges, [2]int{start, start + len(d.Severity)})
		case k > 0 && f.Matches[k-1].Line > d.Line, d.Line < 1:
			return nil
		default:
			f.Matches = append(f.Matches, card.SearchMatch{Line: d.Line, Text: text, Ranges: [][2]int{{0, len(d.Severity)}}})
			f.Count++
			lines++
		}
	}
	c.Total = lines
	c.Truncated = m.Total > len(m.Diagnostics)
	if c.Truncated {
		c.Total = lines + m.Total - len(m.Diagnostics)
	}
	c.Title = plural(m.Total, "problem")
	if len(c.Files) == 0 {
		c.Files = nil
		c.Title = "No problems"
	}
	return c
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
