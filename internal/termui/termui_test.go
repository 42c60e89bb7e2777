package termui

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"

	"github.com/dsh-dev/dsh/internal/card"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in string
		col      int
		want     string
		wantCol  int
	}{
		{"ascii", "plain text", 0, "plain text", 10},
		{"tab at start", "\tx", 0, "    x", 5},
		{"tab mid stop", "ab\tc", 0, "ab  c", 5},
		{"tab from a column", "\t", 3, " ", 4},
		{"escape sequence", "\x1b[31mred", 0, "^[[31mred", 9},
		{"bell and nul", "\a\x00", 0, "^G^@", 4},
		{"carriage return", "a\rb", 0, "a^Mb", 4},
		{"newline", "a\nb", 0, "a^Jb", 4},
		{"del", "\x7f", 0, "^?", 2},
		{"c1 csi", "\u009b2J", 0, "<U+009B>2J", 10},
		{"bidi override", "\u202e", 0, "<U+202E>", 8},
		{"invalid utf8", "a\xffb", 0, "a\uFFFDb", 3},
		{"wide runes", "漢字", 0, "漢字", 4},
		{"combining mark", "e\u0301", 0, "e\u0301", 1},
		{"ambiguous is narrow", "§±", 0, "§±", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, col := clean(tt.in, tt.col)
			if got != tt.want || col != tt.wantCol {
				t.Errorf("clean(%q, %d) = %q, %d; want %q, %d", tt.in, tt.col, got, col, tt.want, tt.wantCol)
			}
			again, col2 := clean(got, tt.col)
			if again != got || col2 != col {
				t.Errorf("clean is not idempotent: %q → %q", got, again)
			}
			if w := width(got); w != col-tt.col {
				t.Errorf("width(%q) = %d, clean counted %d", got, w, col-tt.col)
			}
		})
	}
}

func TestSplitLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\rb", []string{"a\rb"}},
	}
	for _, tt := range tests {
		if got := splitLines(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in   string
		w    int
		want []string
	}{
		{"short", 10, []string{"short"}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		{"exactly nine", 12, []string{"exactly nine"}},
		{"abcdefghijkl xy", 5, []string{"abcde", "fghij", "kl xy"}},
		{"para one\n\npara two", 20, []string{"para one", "", "para two"}},
		{"漢字漢字漢字", 5, []string{"漢字", "漢字", "漢字"}},
		{"  indented code here", 10, []string{"  indented", "code here"}},
		{"tab\there", 20, []string{"tab here"}},
	}
	for _, tt := range tests {
		got := wrap(tt.in, tt.w)
		if !slices.Equal(got, tt.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
		for _, l := range got {
			if width(l) > tt.w {
				t.Errorf("wrap(%q, %d): line %q is wider than %d", tt.in, tt.w, l, tt.w)
			}
		}
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		name         string
		opts         Options
		n            int
		head, hidden int
	}{
		{"short", Options{}, 10, 10, 0},
		{"at the limit", Options{}, 40, 40, 0},
		{"over the limit", Options{}, 41, 20, 11},
		{"long", Options{}, 2000, 20, 1970},
		{"custom", Options{FoldAbove: 5, FoldHead: 2, FoldTail: 1}, 6, 2, 3},
		{"head and tail cover all", Options{FoldAbove: 3, FoldHead: 4, FoldTail: 4}, 8, 8, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, hidden := New(nil, tt.opts).fold(tt.n)
			if head != tt.head || hidden != tt.hidden {
				t.Errorf("fold(%d) = %d, %d; want %d, %d", tt.n, head, hidden, tt.head, tt.hidden)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	tests := []struct {
		width, want int
	}{{0, 100}, {5, 20}, {20, 20}, {132, 132}, {-3, 20}}
	for _, tt := range tests {
		if got := New(nil, Options{Width: tt.width}).width; got != tt.want {
			t.Errorf("Width %d: got %d, want %d", tt.width, got, tt.want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name    string
		t       card.TerminalResult
		want    string
		wantSGR string
	}{
		{"success", card.TerminalResult{ExitCode: card.Ptr(0)}, "exit 0", sgrGreen},
		{"failure", card.TerminalResult{ExitCode: card.Ptr(1)}, "exit 1", sgrRed},
		{"signal", card.TerminalResult{Signal: "SIGKILL"}, "killed by SIGKILL", sgrRed},
		{"timeout killed", card.TerminalResult{TimedOut: true, Signal: "SIGTERM"}, "timed out, killed by SIGTERM", sgrRed},
		{"timeout exited 0", card.TerminalResult{TimedOut: true, ExitCode: card.Ptr(0)}, "timed out, exit 0", sgrRed},
		{"timeout alone", card.TerminalResult{TimedOut: true}, "timed out", sgrRed},
		{"unknown", card.TerminalResult{}, "exit status unknown", sgrDim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sgr := exitStatus(&tt.t)
			if got != tt.want || sgr != tt.wantSGR {
				t.Errorf("got %q (%q), want %q (%q)", got, sgr, tt.want, tt.wantSGR)
			}
		})
	}
}

func TestReadWindow(t *testing.T) {
	tests := []struct {
		name string
		rd   card.ReadResult
		want string
	}{
		{"window", card.ReadResult{Offset: 3, TotalLines: 10, Lines: []card.ReadLine{{Number: 3}, {Number: 4}}}, "lines 3–4 of 10"},
		{"empty file", card.ReadResult{Offset: 1}, "empty file"},
		{"empty window at a positive offset", card.ReadResult{Offset: 120, TotalLines: 500}, "from line 120 of 500, no lines shown"},
		{"past the end", card.ReadResult{Offset: 9, TotalLines: 1}, "line 9 is past the end (1 line)"},
		{"count stopped at its bound", card.ReadResult{Offset: 1, TotalLines: 3001, TotalLinesAtLeast: true,
			Lines: []card.ReadLine{{Number: 1}, {Number: 2}}}, "lines 1–2 of at least 3001"},
	}
	for _, tt := range tests {
		if got := readWindow(&tt.rd); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestXterm256(t *testing.T) {
	tests := []struct {
		rgb  chroma.Colour
		want int
	}{
		{chroma.NewColour(0, 0, 0), 16},
		{chroma.NewColour(255, 255, 255), 231},
		{chroma.NewColour(255, 0, 0), 196},
		{chroma.NewColour(0, 255, 0), 46},
		{chroma.NewColour(0, 0, 255), 21},
		{chroma.NewColour(0x80, 0x80, 0x80), 244},
		{chroma.NewColour(0x12, 0x12, 0x12), 233},
		{chroma.NewColour(0x5f, 0x87, 0xaf), 67},
	}
	for _, tt := range tests {
		if got := xterm256(tt.rgb); got != tt.want {
			t.Errorf("xterm256(%v) = %d, want %d", tt.rgb, got, tt.want)
		}
	}
}

func TestHighlight(t *testing.T) {
	lines := []string{"func f() {", "/* open", "still comment */", "}"}
	got := highlight("go", lines)
	if len(got) != len(lines) {
		t.Fatalf("got %d lines, want %d", len(got), len(lines))
	}
	for i, spans := range got {
		var text strings.Builder
		for _, s := range spans {
			text.WriteString(s.text)
		}
		if text.String() != lines[i] {
			t.Errorf("line %d: spans spell %q, want %q", i, text.String(), lines[i])
		}
	}
	if got[0][0].text != "func" || got[0][0].sgr == "" {
		t.Errorf("keyword not styled: %+v", got[0][0])
	}
	// The comment opened on line 2 colours line 3, which alone would not lex as one.
	if got[2][0].sgr != got[1][0].sgr || got[2][0].sgr == "" {
		t.Errorf("multi-line comment lost its style: %+v vs %+v", got[1], got[2])
	}
	for _, lang := range []string{"", "no-such-language"} {
		if h := highlight(lang, lines); h != nil {
			t.Errorf("highlight(%q) = %v, want nil", lang, h)
		}
	}
}

// TestProgressSplitAnywhere: however output is cut into chunks — inside a CRLF pair,
// inside a multi-byte rune — it renders the same as in one piece.
func TestProgressSplitAnywhere(t *testing.T) {
	out := "héllo wörld\r\n\tindented 漢字\r\nbare\rcr\n" + strings.Repeat("long ", 30) + "\nno newline at end"
	whole := func(color bool) string {
		var b bytes.Buffer
		r := New(&b, Options{Color: color, Width: 60})
		if err := r.Progress(out); err != nil {
			t.Fatal(err)
		}
		if err := r.Note("end"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, color := range []bool{false, true} {
		want := whole(color)
		for _, size := range []int{1, 2, 3, 5, 7} {
			var b bytes.Buffer
			r := New(&b, Options{Color: color, Width: 60})
			for i := 0; i < len(out); i += size {
				if err := r.Progress(out[i:min(i+size, len(out))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Note("end"); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if !color && got != want {
				t.Errorf("chunks of %d:\n%s\nwant\n%s", size, got, want)
			}
			if color && sgr.ReplaceAllString(got, "") != sgr.ReplaceAllString(want, "") {
				t.Errorf("chunks of %d (colour):\n%q\nwant\n%q", size, got, want)
			}
		}
	}
	plain := whole(false)
	for _, line := range []string{"  héllo wörld\n", "      indented 漢字\n", "  bare^Mcr\n", "  no newline at end\n"} {
		if !strings.Contains(plain, line) {
			t.Errorf("output lacks %q:\n%s", line, plain)
		}
	}
}

func TestProgressIncompleteRuneAtEnd(t *testing.T) {
	var b bytes.Buffer
	r := New(&b, Options{})
	if err := r.Progress("cut \xe6\xbc"); err != nil { // the first two bytes of 漢
		t.Fatal(err)
	}
	if err := r.Result(&card.TerminalResult{ExitCode: card.Ptr(0)}, nil, false); err != nil {
		t.Fatal(err)
	}
	if want := "  cut \uFFFD\uFFFD\n  exit 0\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestNilCards(t *testing.T) {
	r := New(&bytes.Buffer{}, Options{})
	calls := []card.Call{nil, (*card.GenericCall)(nil), (*card.TerminalCall)(nil), (*card.DiffCall)(nil)}
	for _, c := range calls {
		if err := r.Call(c); !errors.Is(err, errNilCard) {
			t.Errorf("Call(%#v) = %v, want errNilCard", c, err)
		}
	}
	results := []card.Result{(*card.GenericResult)(nil), (*card.TerminalResult)(nil), (*card.ReadResult)(nil), (*card.DiffResult)(nil)}
	for _, res := range results {
		if err := r.Result(res, nil, false); !errors.Is(err, errNilCard) {
			t.Errorf("Result(%#v) = %v, want errNilCard", res, err)
		}
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteError(t *testing.T) {
	r := New(failingWriter{}, Options{})
	if err := r.Assistant("hi"); !errors.Is(err, errDiskFull) {
		t.Errorf("got %v, want it to wrap %v", err, errDiskFull)
	}
}

// TestFoldedReadTailKeepsContext: the tail of a folded read card is lexed with the
// lines before it, so a block comment opened in the hidden part still colours it.
func TestFoldedReadTailKeepsContext(t *testing.T) {
	var lines []card.ReadLine
	for i := 1; i <= 100; i++ {
		text := "still inside the comment"
		switch {
		case i < 60:
			text = "var x = 1"
		case i == 60:
			text = "/* a long comment"
		case i == 95:
			text = "end of it */"
		}
		lines = append(lines, card.ReadLine{Number: i, Text: text})
	}
	var b bytes.Buffer
	rd := &card.ReadResult{Path: "c.go", Offset: 1, TotalLines: 100, Lang: "go", Lines: lines}
	if err := New(&b, Options{Color: true}).Result(rd, nil, false); err != nil {
		t.Fatal(err)
	}
	gutter := "\x1b[2m 91 │ \x1b[0m"
	_, after, ok := strings.Cut(b.String(), gutter)
	if !ok {
		t.Fatalf("no line 91 in:\n%q", b.String())
	}
	if !strings.HasPrefix(after, "\x1b[") {
		t.Errorf("line 91 is not coloured as a comment: %q", strings.SplitN(after, "\n", 2)[0])
	}
}

// TestLiveFoldMatchesReplay: a command's output streamed live, in any chunks,
// then its result, reads exactly like the result alone (what replay shows):
// live output folds to the same head, marker and tail.
func TestLiveFoldMatchesReplay(t *testing.T) {
	for _, n := range []int{0, 5, 20, 25, 40, 41, 300} {
		var out strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&out, "line %d of the output, long enough to wrap at forty columns\n", i)
		}
		exit := 0
		call := &card.TerminalCall{Title: "make"}
		res := &card.TerminalResult{Output: out.String(), ExitCode: &exit}
		draw := func(live bool, chunk int) string {
			var b bytes.Buffer
			r := New(&b, Options{Width: 40})
			if err := r.Call(call); err != nil {
				t.Fatal(err)
			}
			if live {
				s := out.String()
				for i := 0; i < len(s); i += chunk {
					if err := r.Progress(s[i:min(i+chunk, len(s))]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := r.Result(res, nil, false); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		want := draw(false, 0)
		for _, chunk := range []int{1, 7, 4096} {
			if got := draw(true, chunk); got != want && n > 0 {
				t.Errorf("%d lines in chunks of %d: live\n%s\nreplay\n%s", n, chunk, got, want)
			}
		}
	}
}

// TestRuneWidth: the widths termui answers itself are go-runewidth's.
func TestRuneWidth(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if got, want := runeWidth(r), cells.RuneWidth(r); got != want {
			t.Errorf("runeWidth(%U) = %d, go-runewidth says %d", r, got, want)
		}
	}
}

// A command's output of which only the start and end were kept says how many
// of all its lines are hidden.
func TestFoldCountsAllTheOutput(t *testing.T) {
	var kept strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&kept, "%d\n", i)
	}
	for _, tc := range []struct {
		lines int
		want  string
	}{
		{0, "… 70 more lines"},
		{10000, "… 9970 more lines"},
	} {
		var b strings.Builder
		if err := New(&b, Options{}).Result(&card.TerminalResult{Output: kept.String(), Lines: tc.lines, ExitCode: card.Ptr(0)}, nil, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want+"\n") {
			t.Errorf("Lines %d: want %q in\n%s", tc.lines, tc.want, b.String())
		}
	}
}

// TestLinkOpensWhole: a card's line that is a web link alone is one OSC 8
// hyperlink however the width wraps it (a sign-in's link still opens
// whole); a line with more in it, or without colour, is plain text.
func TestLinkOpensWhole(t *testing.T) {
	link := "http://127.0.0.1:8123/authorize?client_id=dsh&state=abc&scope=tools"
	tests := []struct {
		name  string
		color bool
		text  string
		links int
	}{
		{"a link, wrapped", true, link, 1},
		{"a link in a sentence", true, "open " + link, 0},
		{"a link with an escape", true, link + "\x1b\\", 0},
		{"no colour", false, link, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			r := New(&b, Options{Color: tt.color, Width: 40})
			if err := r.Call(&card.GenericCall{Title: "Sign in to MCP server docs", Content: []card.Content{card.Text(tt.text)}}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(b.String(), "\x1b]8;;"+link+"\x1b\\"); got != tt.links {
				t.Errorf("%d hyperlinks to the link, want %d:\n%q", got, tt.links, b.String())
			}
		})
	}
}
