package mcp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sanitise makes text a server sent safe to show: control and format
// characters (terminal escapes, bidirectional overrides) become spaces, and
// invalid UTF-8 is replaced.
func sanitise(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
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
