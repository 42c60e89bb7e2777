package search

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func itoa(n int) string { return strconv.Itoa(n) }

// naive is the definition the matcher must agree with: each line on its own.
func naive(t *testing.T, pattern string, fold bool, text string) []int {
	t.Helper()
	flags := ""
	if fold {
		flags = "(?i)"
	}
	re := regexp.MustCompile(flags + pattern)
	var out []int
	if text == "" {
		return nil // an empty file has no lines
	}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.MatchString(l) {
			out = append(out, i+1)
		}
	}
	return out
}

func engine(t *testing.T, pattern string, fold bool, text string) []int {
	t.Helper()
	m, err := newMatcher(pattern, fold)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	buf := []byte(text)
	m.lines(buf, func(start, end int) bool {
		out = append(out, strings.Count(text[:start], "\n")+1)
		return true
	})
	return out
}

var matchTexts = []string{
	"",
	"\n",
	"abc",
	"abc\n",
	"a\nb\nc\n\n\nd",
	"foo bar\nbar foo\nfoofoo\nFOO\nfOo\n",
	"Kelvin \u212A and k and K\nlong \u017F and s\nplain\n",
	"crlf\r\nline two\r\n",
	"a\tb\n  a b\na\nb\nab\n",
	"func main() {\n\tfmt.Println(\"hi\")\n}\nfunc (s *Server) Close() error {\n",
	"ünïcödé ÜNÏCÖDÉ\nstraße STRASSE\n",
}

var matchPatterns = []struct {
	pattern string
	fold    bool
}{
	{"foo", false}, {"foo", true}, {"FOO", true}, {"o", false}, {"^foo", false}, {"foo$", false},
	{"^$", false}, {"^", false}, {"$", false}, {"", false}, {"a\\sb", false}, {"a[^x]b", false},
	{"a\\s*b", false}, {"\\bfoo\\b", false}, {"k", true}, {"K", true}, {"kelvin", true}, {"s and", true},
	{"\u212A", true}, {"\u017F", true}, {"ünï", true}, {"straße", true}, {"line\\r$", false},
	{"func \\(\\w+ \\*\\w+\\) Close\\(", false}, {"(foo|bar)", false}, {"fo+", false}, {"(?i)FoO", false},
	{"Println\\(\"", false}, {"x*", false}, {"a\nb", false}, {"[a-c]+\\n", false}, {"(?s)a.b", false},
	{"(?-m)^a", false}, {"\\Aabc", false}, {"main|Close", true}, {"é", true}, {"(fmt)+\\.", false},
}

// TestMatcherAgreesWithNaive: every pattern on every text finds exactly the lines
// that matching each line on its own finds.
func TestMatcherAgreesWithNaive(t *testing.T) {
	for _, tx := range matchTexts {
		for _, p := range matchPatterns {
			want := naive(t, p.pattern, p.fold, tx)
			got := engine(t, p.pattern, p.fold, tx)
			if !slices.Equal(got, want) {
				t.Errorf("pattern %q (fold %v) on %q: lines %v, want %v", p.pattern, p.fold, tx, got, want)
			}
		}
	}
}

// TestMatcherRandom checks random texts over a small alphabet, where the
// prefilters' candidates are dense and straddle lines.
func TestMatcherRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "A", "B", "k", "K", "\u212A", "s", "\u017F", "\n", " ", "ab", "AB", "\r"}
	patterns := []struct {
		p    string
		fold bool
	}{{"ab", false}, {"ab", true}, {"a b", true}, {"kab", true}, {"a+b", false}, {"s[ab]", true}, {"b$", false}, {"^a", true}, {"a\\sb", false}, {"[^a]b", false}}
	for range 2000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		tx := b.String()
		for _, p := range patterns {
			if got, want := engine(t, p.p, p.fold, tx), naive(t, p.p, p.fold, tx); !slices.Equal(got, want) {
				t.Fatalf("pattern %q (fold %v) on %q: lines %v, want %v", p.p, p.fold, tx, got, want)
			}
		}
	}
}

func TestPrefilterChosen(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		fold    bool
		pure    bool
		lit     string
		needle  string
	}{
		{"func main", false, true, "func main", ""},
		{"func \\w+\\(ctx context\\.Context", false, false, "(ctx context.Context", ""},
		{"deprecated", true, false, "", "deprecated"},
		{"desk top", true, false, "", " top"}, // k and s fold outside ASCII: the longest run without them
		{"a|b", false, false, "", ""},
		{"x*", false, false, "", ""},
	} {
		m, err := newMatcher(tc.pattern, tc.fold)
		if err != nil {
			t.Fatal(err)
		}
		needle := ""
		if m.fold != nil {
			needle = string(m.fold.lower)
		}
		if m.pure != tc.pure || string(m.lit) != tc.lit || needle != tc.needle {
			t.Errorf("%q: pure %v lit %q needle %q; want %v %q %q", tc.pattern, m.pure, m.lit, needle, tc.pure, tc.lit, tc.needle)
		}
	}
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		pattern, line string
		fold          bool
		want          [][2]int
	}{
		{"ab", "ab xab ab", false, [][2]int{{0, 2}, {4, 6}, {7, 9}}},
		{"a+", "caaab a", false, [][2]int{{1, 4}, {6, 7}}},
		{"x*", "abc", false, [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}}},
		{"AB", "ab Ab", true, [][2]int{{0, 2}, {3, 5}}},
	} {
		m, _ := newMatcher(tc.pattern, tc.fold)
		if got := m.ranges([]byte(tc.line)); !slices.Equal(got, tc.want) {
			t.Errorf("ranges(%q, %q) = %v, want %v", tc.pattern, tc.line, got, tc.want)
		}
	}
}

// TestLongLineWindow: a match far into a long line is shown in a window around
// it, with its range pointing at it; invalid UTF-8 keeps ranges on the text shown.
func TestLongLineWindow(t *testing.T) {
	m, _ := newMatcher("needle", false)
	line := strings.Repeat("é", 2000) + "needle" + strings.Repeat("x", 2000)
	h := matchLine(m, 7, []byte(line))
	if len(h.ranges) != 1 || h.text[h.ranges[0][0]:h.ranges[0][1]] != "needle" {
		t.Fatalf("ranges %v in %q", h.ranges, h.text)
	}
	if !strings.HasPrefix(h.text, "[…] ") || !strings.HasSuffix(h.text, " […]") || len(h.text) > maxLineBytes+20 {
		t.Errorf("window %q", h.text)
	}
	h = matchLine(m, 1, []byte("\xff\xfeneedle\r"))
	if len(h.ranges) != 1 || h.text[h.ranges[0][0]:h.ranges[0][1]] != "needle" {
		t.Errorf("invalid UTF-8: ranges %v in %q", h.ranges, h.text)
	}
	e, _ := newMatcher("^$", false)
	if h := matchLine(e, 1, nil); len(h.ranges) != 1 || h.ranges[0] != [2]int{0, 0} {
		t.Errorf("empty line: %v", h.ranges)
	}
}
