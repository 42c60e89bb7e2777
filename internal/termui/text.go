package termui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// cells measures display width. East Asian ambiguous runes count as narrow, fixed
// here rather than read from the locale, so output is a function of the input alone.
var cells = &runewidth.Condition{}

// runeWidth is cells.RuneWidth, answered here for the runes dsh draws itself
// (rules, bullets, arrows, ellipses, the spinner): go-runewidth builds a 2 MiB
// table the first time it is asked about any rune from U+0300 on, some 10 ms
// that a one-shot `dsh tool` would otherwise pay for its own frame.
func runeWidth(r rune) int {
	switch r {
	case '—', '–', '−', '…', '⋮', '·', '•', '●', '▎', '│', '─', '┼', '→', '↳', '↑', '↓', '›', '\uFFFD',
		'⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏':
		return 1
	}
	return cells.RuneWidth(r)
}

// tabWidth is the distance between tab stops, counted from the start of a body.
const tabWidth = 4

// clean makes untrusted text safe and measurable on a terminal: tabs become spaces up
// to the next stop, C0 controls, DEL, C1 controls and bidi overrides become visible
// (so a file or a command's output can never drive the terminal), and invalid UTF-8
// becomes U+FFFD. col is the display column where s starts; clean returns the column
// where it ends. clean is idempotent on its own output.
func clean(s string, col int) (string, int) {
	if printableASCII(s) {
		return s, col + len(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			col += runeWidth(utf8.RuneError)
		case r == '\t':
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
			col += 2
		case r == 0x7f:
			b.WriteString("^?")
			col += 2
		case r >= 0x80 && r <= 0x9f, isBidiControl(r):
			v := fmt.Sprintf("<U+%04X>", r)
			b.WriteString(v)
			col += len(v)
		default:
			b.WriteRune(r)
			col += runeWidth(r)
		}
	}
	return b.String(), col
}

// Sanitize is clean for callers outside termui that show untrusted text (a
// running command's output) on a terminal.
func Sanitize(s string) string {
	out, _ := clean(s, 0)
	return out
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// isBidiControl reports the explicit directional formatting characters, which can
// make displayed text read differently from what it is ("Trojan Source").
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// width is the display width of cleaned text, summed rune by rune like clean counts
// it. A grapheme cluster (an emoji sequence) may measure wider than it draws, so a
// line is at worst cut early, never too late.
func width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// wider reports whether cleaned text s is wider than w columns, measuring no
// further than w: wrapping a line asks it once per wrapped piece, and a
// megabyte line measured whole each time took quadratic time.
func wider(s string, w int) bool {
	col := 0
	for _, r := range s {
		if col += runeWidth(r); col > w {
			return true
		}
	}
	return false
}

// cut returns the longest prefix of cleaned text s that fits in w columns.
func cut(s string, w int) string {
	col := 0
	for i, r := range s {
		rw := runeWidth(r)
		if col+rw > w {
			return s[:i]
		}
		col += rw
	}
	return s
}

// splitLines splits text at "\n", dropping the "\r" of a CRLF ending and the empty
// piece after a final newline. "" has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// wrap cleans prose and breaks it at spaces into lines of at most w columns; a word
// wider than w is broken where it must be.
func wrap(text string, w int) []string {
	var out []string
	for _, src := range splitLines(text) {
		line, _ := clean(src, 0)
		if width(line) <= w {
			out = append(out, line)
			continue
		}
		var cur string
		curW, started := 0, false
		for word := range strings.SplitSeq(line, " ") {
			ww := width(word)
			switch {
			case !started:
				cur, curW, started = word, ww, true
			case curW+1+ww <= w:
				cur += " " + word
				curW += 1 + ww
			default:
				out = append(out, cur)
				cur, curW = word, ww
			}
			for curW > w {
				head := cut(cur, w)
				if head == "" { // a rune wider than w
					head = string([]rune(cur)[:1])
				}
				out = append(out, head)
				cur = cur[len(head):]
				curW = width(cur)
			}
		}
		out = append(out, cur)
	}
	return out
}

// plural spells n with a noun: "1 line", "3 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
