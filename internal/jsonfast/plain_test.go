package jsonfast

import (
	"strings"
	"testing"
)

// plainByte is PlainWords' rule for one byte.
func plainByte(c byte, html bool) bool {
	if html && (c == '<' || c == '>' || c == '&') {
		return false
	}
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
}

// plainWordsSlow is PlainWords a byte at a time.
func plainWordsSlow(s string, i int, html bool) int {
	for ; i+8 <= len(s); i += 8 {
		for k := range 8 {
			if !plainByte(s[i+k], html) {
				return i
			}
		}
	}
	return i
}

func TestPlainWords(t *testing.T) {
	// Every byte value in every place of a word, between plain words.
	for _, html := range []bool{false, true} {
		for c := range 256 {
			for at := range 8 {
				b := []byte(strings.Repeat("abcdefgh", 3))
				b[8+at] = byte(c)
				for from := range 3 {
					if got, want := PlainWords(string(b), from, html), plainWordsSlow(string(b), from, html); got != want {
						t.Fatalf("byte %#x at %d, from %d, html %v: %d, want %d", c, 8+at, from, html, got, want)
					}
				}
			}
		}
	}
	for _, tc := range []struct {
		s    string
		html bool
		want int
	}{
		{"", false, 0},
		{"short", false, 0},
		{"exactly8", false, 8},
		{"exactly8 and then some", false, 16},
		{"<tag> is fine", false, 8},
		{"<tag> is not", true, 0},
		{"plain text\n", false, 8},
		{"plain\ttext", false, 0},
		{"über alles", false, 0},
		{"12345678\x7f2345678", false, 16}, // DEL needs no escape
	} {
		if got := PlainWords(tc.s, 0, tc.html); got != tc.want {
			t.Errorf("PlainWords(%q, 0, %v) = %d, want %d", tc.s, tc.html, got, tc.want)
		}
	}
}

func FuzzPlainWords(f *testing.F) {
	f.Add("some text with \"quotes\" and <tags> & \\ backslashes \x01", 3, true)
	f.Fuzz(func(t *testing.T, s string, from int, html bool) {
		if from < 0 || from > len(s) {
			return
		}
		if got, want := PlainWords(s, from, html), plainWordsSlow(s, from, html); got != want {
			t.Fatalf("PlainWords(%q, %d, %v) = %d, want %d", s, from, html, got, want)
		}
	})
}
