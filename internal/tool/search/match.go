package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// matcher finds the lines of a buffer that a pattern matches. Lines are matched
// one by one, as grep and ripgrep do ("^" and "$" are the line's ends and no
// match spans lines), but a buffer is never split into lines to be matched: a
// literal the pattern requires is searched for first (bytes.Index, or a scan for
// its rarest byte in either case when case is ignored), and only the lines it
// finds are given to the regular expression.
type matcher struct {
	re *regexp.Regexp
	// lit is the pattern itself when it is a plain case-sensitive literal (re then
	// confirms nothing), else a literal every match contains, or nil.
	lit  []byte
	pure bool
	fold *foldNeedle // a case-insensitive literal every match contains
}

// foldNeedle is an ASCII literal matched case-insensitively: every match holds it
// in some mix of cases. Scanning is for its rarest byte, in both cases.
type foldNeedle struct {
	lower  []byte
	off    int  // the scanned byte's index in lower
	lo, up byte // the scanned byte in lower and upper case
}

func newMatcher(pattern string, ignoreCase bool) (*matcher, error) {
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re}
	tree, err := syntax.Parse(flags+pattern, syntax.Perl)
	if err != nil {
		return m, nil //nolint:nilerr // regexp accepted it; no prefilter then
	}
	tree = tree.Simplify()
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op == syntax.OpLiteral && tree.Flags&syntax.FoldCase == 0 {
		m.lit = []byte(string(tree.Rune))
		// A literal newline can never be inside one line: the expression then
		// confirms (and refuses) every candidate.
		m.pure = !bytes.ContainsRune(m.lit, '\n')
		return m, nil
	}
	lit, fold := required(tree)
	switch {
	case lit != "" && !fold:
		m.lit = []byte(lit)
	case lit != "":
		m.fold = newFoldNeedle(lit)
	}
	return m, nil
}

// required returns a literal every match of re contains (the longest one it
// finds, a case-sensitive one first), and whether it matches case-insensitively.
func required(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, sub := range re.Sub {
			lit, fold := required(sub)
			if lit == "" {
				continue
			}
			if best == "" || (bestFold && !fold) || (bestFold == fold && foldScore(lit, fold) > foldScore(best, bestFold)) {
				best, bestFold = lit, fold
			}
		}
		return best, bestFold
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary,
		syntax.OpNoWordBoundary, syntax.OpStar, syntax.OpQuest, syntax.OpAlternate:
		// no literal every match must contain
	}
	return "", false
}

// foldScore ranks a literal by how much of it a prefilter can use.
func foldScore(lit string, fold bool) int {
	if !fold {
		return len(lit)
	}
	return len(foldSafeRun(lit))
}

// foldSafe reports the bytes whose every case-fold is an ASCII byte: so a
// case-insensitive match of them is found byte by byte. Not k and s, whose folds
// include the Kelvin sign and the long s.
var foldSafe = func() (safe [128]bool) {
	for c := range rune(128) {
		ok := true
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= 128 {
				ok = false
			}
		}
		safe[c] = ok
	}
	return safe
}()

// foldSafeRun is the longest run of fold-safe bytes in lit.
func foldSafeRun(lit string) string {
	best, start := "", 0
	for i := 0; i <= len(lit); i++ {
		if i == len(lit) || lit[i] >= utf8.RuneSelf || !foldSafe[lit[i]] {
			if i-start > len(best) {
				best = lit[start:i]
			}
			start = i + 1
		}
	}
	return best
}

func newFoldNeedle(lit string) *foldNeedle {
	run := foldSafeRun(lit)
	if run == "" {
		return nil
	}
	f := &foldNeedle{lower: bytes.ToLower([]byte(run))}
	for i, c := range f.lower {
		if byteRank(c) > byteRank(f.lower[f.off]) {
			f.off = i
		}
	}
	f.lo = f.lower[f.off]
	f.up = f.lo
	if 'a' <= f.lo && f.lo <= 'z' {
		f.up = f.lo - 'a' + 'A'
	}
	return f
}

// common lists bytes of source code and prose from the most frequent on, roughly;
// a byte not listed is rarer than all of them.
const common = " e\ttarionsl\nc.du()pm_hf,g\"=;b:y{}w/-vk*0x1[]'2#<>&+34q9j56z78!|%$?@\\^`~"

func byteRank(c byte) int {
	if i := bytes.IndexByte([]byte(common), c); i >= 0 {
		return i // higher is rarer
	}
	if 'A' <= c && c <= 'Z' {
		return byteRank(c-'A'+'a') + 1
	}
	return len(common) + 1
}

// finder yields the candidate positions of one buffer in order.
type finder struct {
	m      *matcher
	buf    []byte
	lo, up int // next positions of the fold needle's byte in each case; -1 none
}

func (m *matcher) finder(buf []byte) *finder {
	return &finder{m: m, buf: buf, lo: -2, up: -2}
}

// next returns the first candidate at or after pos, or -1; sure says the line
// holding it matches without asking the regular expression. A candidate past
// the end of buf is an empty match at its very end.
func (f *finder) next(pos int) (at int, sure bool) {
	buf := f.buf
	switch m := f.m; {
	case m.lit != nil:
		i := bytes.Index(buf[pos:], m.lit)
		if i < 0 {
			return -1, false
		}
		return pos + i, m.pure
	case m.fold != nil:
		n := m.fold
		for {
			f.lo = nextByte(buf, pos, f.lo, n.lo)
			f.up = nextByte(buf, pos, f.up, n.up)
			c := f.lo
			if c < 0 || (f.up >= 0 && f.up < c) {
				c = f.up
			}
			if c < 0 {
				return -1, false
			}
			start := c - n.off
			if start >= 0 && start+len(n.lower) <= len(buf) && bytes.EqualFold(buf[start:start+len(n.lower)], n.lower) {
				return c, false
			}
			pos = c + 1
		}
	default:
		loc := m.re.FindIndex(buf[pos:])
		if loc == nil {
			return -1, false
		}
		// A match without a newline in it is a match of its line.
		return pos + loc[0], bytes.IndexByte(buf[pos+loc[0]:pos+loc[1]], '\n') < 0
	}
}

// nextByte is the position of c at or after pos given the last one found (-2:
// none looked for yet, -1: none left).
func nextByte(buf []byte, pos, last int, c byte) int {
	if last == -1 || last >= pos {
		return last
	}
	i := bytes.IndexByte(buf[pos:], c)
	if i < 0 {
		return -1
	}
	return pos + i
}

// lines calls fn with the bounds [start, end) of each matching line of buf (end
// at its newline or at the end of buf) until fn returns false. A final newline
// ends the last line; it does not start an empty one.
func (m *matcher) lines(buf []byte, fn func(start, end int) bool) {
	f := m.finder(buf)
	for pos := 0; pos <= len(buf); {
		at, sure := f.next(pos)
		if at < 0 {
			return
		}
		if at >= len(buf) && (len(buf) == 0 || buf[len(buf)-1] == '\n') {
			return // the empty "line" after the last newline
		}
		start := pos + bytes.LastIndexByte(buf[pos:at], '\n') + 1
		end := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			end = at + i
		}
		if (sure || m.re.Match(buf[start:end])) && !fn(start, end) {
			return
		}
		pos = end + 1
	}
}

// ranges are the byte ranges of the matches in one line (zero-width for an
// empty match).
func (m *matcher) ranges(line []byte) [][2]int {
	var out [][2]int
	if m.pure {
		for i := 0; ; {
			j := bytes.Index(line[i:], m.lit)
			if j < 0 {
				return out
			}
			out = append(out, [2]int{i + j, i + j + len(m.lit)})
			i += j + len(m.lit)
		}
	}
	for _, loc := range m.re.FindAllIndex(line, -1) {
		out = append(out, [2]int{loc[0], loc[1]})
	}
	return out
}
