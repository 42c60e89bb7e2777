package bash

import (
	"bytes"
	"strings"
	"testing"
)

func TestRing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		writes  []string
		since   int64
		want    string
		dropped int64
	}{
		{"empty", nil, 0, "", 0},
		{"partial", []string{"ab", "c"}, 0, "abc", 0},
		{"from offset", []string{"abc", "de"}, 2, "cde", 0},
		{"exactly full", []string{"abcde"}, 0, "abcde", 0},
		{"wraps", []string{"abc", "def", "g"}, 0, "cdefg", 2},
		{"one big write", []string{"0123456789"}, 0, "56789", 5},
		{"big write after small", []string{"ab", "0123456789"}, 3, "56789", 4},
		{"offset inside kept part", []string{"abcdefgh"}, 5, "fgh", 0},
		{"offset at end", []string{"abc"}, 3, "", 0},
		{"many small wraps", []string{"ab", "cd", "ef", "gh", "ij", "k"}, 1, "ghijk", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing(5)
			var all strings.Builder
			for _, w := range tc.writes {
				_, _ = r.Write([]byte(w))
				all.WriteString(w)
			}
			got, dropped := r.since(tc.since)
			if string(got) != tc.want || dropped != tc.dropped {
				t.Errorf("since(%d) = %q, %d dropped; want %q, %d", tc.since, got, dropped, tc.want, tc.dropped)
			}
			if r.total != int64(all.Len()) || cap(r.buf) > 5 {
				t.Errorf("total %d, cap %d", r.total, cap(r.buf))
			}
		})
	}
}

func TestHeadTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"abc"}, "abc"},
		{"fits exactly", []string{"abcd", "efg"}, "abcdefg"},
		{"omits the middle", []string{"abcd", "efgh", "ijkl"}, "abc\n… 5 bytes omitted …\nijkl"},
		{"rune cut at the head", []string{"ab\u00e9", "xxxxxxxx", "wxyz"}, "ab\n… 10 bytes omitted …\nwxyz"},
		{"tail starts mid-rune", []string{"abcxxxxxx", "\u00e9xyz"}, "abc\n… 8 bytes omitted …\nxyz"},
		{"stream ends mid-rune", []string{"abcxxxxxx", "yz\xc3"}, "abc\n… 5 bytes omitted …\nxyz\uFFFD"},
		{"invalid bytes", []string{"a\xffb"}, "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newHeadTail(3, 4)
			for _, w := range tc.writes {
				_, _ = b.Write([]byte(w))
			}
			if got := b.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitIncomplete(t *testing.T) {
	for _, tc := range []struct {
		in, complete, rest string
	}{
		{"", "", ""},
		{"abc", "abc", ""},
		{"ab\u00e9", "ab\u00e9", ""},
		{"ab\xc3", "ab", "\xc3"},
		{"a\xe2\x82", "a", "\xe2\x82"},
		{"a\xf0\x9f\x98", "a", "\xf0\x9f\x98"},
		{"a\xf0\x9f\x98\x80", "a\xf0\x9f\x98\x80", ""},
		{"a\x80", "a\x80", ""}, // a stray continuation byte is invalid, not incomplete
	} {
		c, r := splitIncomplete([]byte(tc.in))
		if !bytes.Equal(c, []byte(tc.complete)) || !bytes.Equal(r, []byte(tc.rest)) {
			t.Errorf("splitIncomplete(%q) = %q, %q; want %q, %q", tc.in, c, r, tc.complete, tc.rest)
		}
	}
}

// A long output's card counts the lines the command wrote, not the lines
// kept of its start and end; a short one's counts none (Output is all).
func TestOutputLinesCountsWhatWasWritten(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		cmd  string
		want int
	}{
		{"seq 1 10000", 10000},
		{"seq 1 10000; printf end", 10001},
		{"seq 1 10", 0},
	} {
		r := f.bash(tc.cmd)
		if c := f.terminal(tc.cmd, r); c == nil || c.Lines != tc.want {
			t.Errorf("%s: card %+v, want %d lines", tc.cmd, c, tc.want)
		}
	}
}
