package acp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

// searchTextPlain is searchText as it reads most simply: the lines, then the
// fence around them.
func searchTextPlain(r *card.SearchResult) string {
	var b strings.Builder
	for _, f := range r.Files {
		if len(f.Matches) == 0 {
			b.WriteString(f.Path + ":" + strconv.Itoa(f.Count) + "\n")
		}
		for _, m := range f.Matches {
			sep := "-"
			if m.Ranges != nil {
				sep = ":"
			}
			b.WriteString(f.Path + sep + strconv.Itoa(m.Line) + sep + m.Text + "\n")
		}
	}
	for _, p := range r.Paths {
		b.WriteString(p + "\n")
	}
	if b.Len() == 0 {
		return "No matches."
	}
	text := fence(strings.TrimSuffix(b.String(), "\n"), "")
	if r.Truncated {
		text += "\n(" + strconv.Itoa(r.Total) + " in all; not all are shown.)"
	}
	return text
}

// TestSearchText: the search text written fenced in one pass is the text
// fenced after it was written.
func TestSearchText(t *testing.T) {
	hit := [][2]int{{0, 1}}
	for _, r := range []card.SearchResult{
		{},
		{Paths: []string{""}},
		{Paths: []string{"a", ""}},
		{Paths: []string{"", ""}},
		{Paths: []string{"a`", "``b"}, Truncated: true, Total: 9},
		{Files: []card.SearchFile{{Path: "a.go", Count: 3}}},
		{Files: []card.SearchFile{{Path: "a.go", Count: 2, Matches: []card.SearchMatch{
			{Line: 1, Text: "x ```` y", Ranges: hit}, {Line: 2, Text: ""}, {Line: 3, Text: "", Ranges: hit}}}}},
		{Files: []card.SearchFile{{Path: "b`", Count: 1, Matches: []card.SearchMatch{{Line: 7, Text: "`", Ranges: hit}}}},
			Paths: []string{"c"}, Truncated: true, Total: 2},
	} {
		if got, want := searchText(&r), searchTextPlain(&r); got != want {
			t.Errorf("searchText(%+v) = %q, want %q", r, got, want)
		}
	}
}

// TestReadText: the read window written fenced in one pass is its lines
// joined, then fenced.
func TestReadText(t *testing.T) {
	for _, lines := range [][]string{{""}, {"a"}, {"a", ""}, {"", ""}, {"x```", "`"}, {"a\n"}, {"a", "b\n"}} {
		r := card.ReadResult{Lang: "go"}
		for i, l := range lines {
			r.Lines = append(r.Lines, card.ReadLine{Number: i + 1, Text: l})
		}
		if got, want := readText(&r), fence(strings.Join(lines, "\n"), "go"); got != want {
			t.Errorf("readText(%q) = %q, want %q", lines, got, want)
		}
	}
}
