package acp

import (
	"strconv"
	"strings"
)

// fence wraps s in a Markdown code block tagged with lang. The fence is one
// backtick longer than the longest run of backticks in s (three at least), so
// nothing s holds can close it early.
func fence(s, lang string) string {
	f := fenceFor(backticks(s))
	var b strings.Builder
	b.Grow(len(s) + 2*len(f) + len(lang) + 2)
	b.WriteString(f)
	b.WriteString(lang)
	b.WriteByte('\n')
	b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(f)
	return b.String()
}

// fenceFor is the fence of text whose longest run of backticks is longest.
func fenceFor(longest int) string { return strings.Repeat("`", max(3, longest+1)) }

// backticks is the longest run of backticks in s.
func backticks(s string) int {
	longest := 0
	for i := strings.IndexByte(s, '`'); i >= 0; { // from backtick to backtick: text has few
		run := 1
		for i+run < len(s) && s[i+run] == '`' {
			run++
		}
		longest = max(longest, run)
		i += run
		next := strings.IndexByte(s[i:], '`')
		if next < 0 {
			break
		}
		i += next
	}
	return longest
}

func itoa(n int) string { return strconv.Itoa(n) }
