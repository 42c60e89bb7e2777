package mcp

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"unicode"
	"unicode/utf8"
)

// sanitise makes text a server sent safe to show on one line: terminal
// escape sequences go, other control and format characters (bidirectional
// overrides) become spaces, and invalid UTF-8 is replaced.
func sanitise(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, sanitiseText(s))
}

// sanitiseText is sanitise keeping lines and tabs: for a description.
func sanitiseText(s string) string {
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			return ' '
		}
		return r
	}, s)
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
