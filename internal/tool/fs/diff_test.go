package fs

import (
	"github.com/dsh-dev/dsh/internal/tool"

	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// hunkApply applies persisted hunks to old the way a consumer would: it checks
// that each hunk's old side is really at OldStart and that its new side lands at
// NewStart, and returns the new text.
func hunkApply(old string, hunks []diffHunk) (string, error) {
	lines := strings.SplitAfter(old, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out strings.Builder
	next, written := 0, 0 // next old line to copy (0-based); lines written so far
	for i, h := range hunks {
		start := h.OldStart - 1
		if start < next || start+h.OldLines > len(lines) {
			return "", fmt.Errorf("hunk %d: old lines %d+%d out of order or range (file has %d)", i, h.OldStart, h.OldLines, len(lines))
		}
		out.WriteString(strings.Join(lines[next:start], ""))
		written += start - next
		if got := strings.Join(lines[start:start+h.OldLines], ""); got != h.OldText {
			return "", fmt.Errorf("hunk %d: old text at line %d is %q, hunk says %q", i, h.OldStart, got, h.OldText)
		}
		if written != h.NewStart-1 {
			return "", fmt.Errorf("hunk %d: new side starts at line %d, hunk says %d", i, written+1, h.NewStart)
		}
		out.WriteString(h.NewText)
		written += h.NewLines
		next = start + h.OldLines
	}
	out.WriteString(strings.Join(lines[next:], ""))
	return out.String(), nil
}

// diffRandomText builds n lines from a small vocabulary (so lines repeat, as in
// code), with CRLF endings when crlf and possibly no final newline.
func diffRandomText(r *rand.Rand, n int, crlf bool) string {
	words := []string{"a", "b", "c", "}", "", "\tx := 1", "return nil", "func f() {"}
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	var b strings.Builder
	for i := range n {
		b.WriteString(words[r.IntN(len(words))])
		if i < n-1 || r.IntN(3) > 0 {
			b.WriteString(eol)
		}
	}
	return b.String()
}

// diffMutate changes, inserts and deletes random lines of s.
func diffMutate(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for range r.IntN(6) + 1 {
		if len(lines) == 0 {
			lines = append(lines, "new\n")
			continue
		}
		i := r.IntN(len(lines))
		switch r.IntN(3) {
		case 0:
			lines[i] = fmt.Sprintf("changed %d\n", r.IntN(100))
		case 1:
			lines = append(lines[:i], append([]string{"inserted\n"}, lines[i:]...)...)
		default:
			lines = append(lines[:i], lines[i+1:]...)
		}
	}
	if r.IntN(4) == 0 { // drop or add the final newline
		out := strings.Join(lines, "")
		if strings.HasSuffix(out, "\n") {
			return strings.TrimSuffix(out, "\n")
		}
		return out + "\n"
	}
	return strings.Join(lines, "")
}

// diffCheckMeta asserts that hunks persist as meta the presenters accept, and
// returns the hunks as a replay would see them.
func diffCheckMeta(t *testing.T, m diffMeta) []diffHunk {
	t.Helper()
	raw, err := tool.EncodeMeta(&m)
	if err != nil {
		t.Fatal(err)
	}
	got := tool.DecodeMeta[diffMeta](raw)
	if got == nil {
		t.Fatalf("meta does not decode: %s", raw)
	}
	return got.Hunks
}

func TestDiffHunksApplyToOldYieldNew(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		old := diffRandomText(r, r.IntN(60), r.IntN(4) == 0)
		new := diffMutate(r, old)
		hunks, omitted := diffTexts(old, new, &hunkBudget{hunks: 1 << 30, bytes: 1 << 30})
		if omitted != 0 {
			t.Fatalf("case %d: %d hunks omitted with an unlimited budget", i, omitted)
		}
		if old == new {
			if len(hunks) != 0 {
				t.Fatalf("case %d: identical texts gave hunks %+v", i, hunks)
			}
			continue
		}
		// Apply the hunks as persisted and replayed, not as computed.
		hunks = diffCheckMeta(t, diffMeta{Path: "f", Hunks: hunks})
		got, err := hunkApply(old, hunks)
		if err != nil {
			t.Fatalf("case %d: %v\nold %q\nnew %q\nhunks %+v", i, err, old, new, hunks)
		}
		if got != new {
			t.Fatalf("case %d: applying hunks gives %q, want %q", i, got, new)
		}
	}
}

func TestDiffContextAndMerging(t *testing.T) {
	old := diffNumbered(1, 30)
	// Lines 5 and 11 are 5 lines apart: their contexts touch, one hunk. Line 25
	// is far: its own hunk.
	new := strings.Replace(old, "line 5\n", "five\n", 1)
	new = strings.Replace(new, "line 11\n", "eleven\n", 1)
	new = strings.Replace(new, "line 25\n", "", 1)
	hunks, _ := diffTexts(old, new, newHunkBudget())
	want := []diffHunk{
		{OldStart: 2, OldLines: 13, NewStart: 2, NewLines: 13,
			OldText: diffNumbered(2, 14),
			NewText: diffNumbered(2, 4) + "five\n" + diffNumbered(6, 10) + "eleven\n" + diffNumbered(12, 14)},
		{OldStart: 22, OldLines: 7, NewStart: 22, NewLines: 6,
			OldText: diffNumbered(22, 28), NewText: diffNumbered(22, 24) + diffNumbered(26, 28)},
	}
	if fmt.Sprint(hunks) != fmt.Sprint(want) {
		t.Fatalf("hunks\n%+v\nwant\n%+v", hunks, want)
	}
	// Eight lines apart: two hunks.
	new = strings.Replace(old, "line 5\n", "five\n", 1)
	new = strings.Replace(new, "line 13\n", "thirteen\n", 1)
	if hunks, _ := diffTexts(old, new, newHunkBudget()); len(hunks) != 2 {
		t.Fatalf("changes 8 lines apart: want 2 hunks, got %+v", hunks)
	}
}

func diffNumbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestDiffEdges(t *testing.T) {
	big := diffNumbered(1, 5000)
	cases := []struct{ name, old, new string }{
		{"empty to text", "", "a\nb\n"},
		{"text to empty", "a\nb\n", ""},
		{"add final newline", "a\nb", "a\nb\n"},
		{"drop final newline", "a\nb\n", "a\nb"},
		{"change last line without newline", "a\nb", "a\nc"},
		{"append", "a\n", "a\nb\n"},
		{"prepend", "b\n", "a\nb\n"},
		{"crlf", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"},
		{"one line of a big file", big, strings.Replace(big, "line 2500\n", "changed\n", 1)},
		{"head of a big file", big, "new\n" + big},
		{"tail of a big file", big, big + "new"},
		{"same suffix not at a line start", "x", "yx"},
		{"repeated lines", "a\na\na\na\n", "a\na\na\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hunks, omitted := diffTexts(c.old, c.new, newHunkBudget())
			if omitted != 0 || len(hunks) == 0 {
				t.Fatalf("hunks %+v, omitted %d", hunks, omitted)
			}
			got, err := hunkApply(c.old, hunks)
			if err != nil || got != c.new {
				t.Fatalf("apply: %q, %v; want %q", got, err, c.new)
			}
			diffCheckMeta(t, diffMeta{Path: "f", Hunks: hunks})
		})
	}
	// A one-line change to a big file is one small hunk at the right line.
	hunks, _ := diffTexts(big, strings.Replace(big, "line 2500\n", "changed\n", 1), newHunkBudget())
	if len(hunks) != 1 || hunks[0].OldStart != 2497 || hunks[0].OldLines != 7 {
		t.Fatalf("one-line change: %+v", hunks)
	}
}

// Scattered changes in a long file must come out as one small hunk each, not as
// the one giant hunk go-udiff's depth-limited search alone returns.
func TestDiffScatteredChangesStayMinimal(t *testing.T) {
	old, new := diffScattered(10000, 100, 7)
	hunks, omitted := diffTexts(old, new, newHunkBudget())
	if omitted != 0 {
		t.Fatalf("%d hunks omitted", omitted)
	}
	if len(hunks) < 90 || len(hunks) > 100 {
		t.Fatalf("want about 100 hunks (a few merge), got %d", len(hunks))
	}
	for _, h := range hunks {
		if h.OldLines > 2*diffContext+8 {
			t.Fatalf("hunk at %d spans %d old lines: not minimal", h.OldStart, h.OldLines)
		}
	}
	if got, err := hunkApply(old, hunks); err != nil || got != new {
		t.Fatalf("apply: %v", err)
	}
}

// diffScattered returns a file of n distinct lines and a copy with changes lines
// replaced at random places.
func diffScattered(n, changes int, seed uint64) (string, string) {
	r := rand.New(rand.NewPCG(seed, 0))
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: %x\n", i, r.Uint64())
	}
	old := strings.Join(lines, "")
	for _, i := range r.Perm(n)[:changes] {
		lines[i] = "changed " + lines[i]
	}
	return old, strings.Join(lines, "")
}

// diffDisjoint returns two files of n lines that share no line.
func diffDisjoint(n int) (string, string) {
	var a, b strings.Builder
	for i := range n {
		fmt.Fprintf(&a, "old line %d\n", i)
		fmt.Fprintf(&b, "new line %d\n", i)
	}
	return a.String(), b.String()
}

// Two completely different files fall back to one whole hunk, which the byte
// budget leaves out; what matters is that it happens without quadratic work. The
// work bound is checked by counting, not by the clock.
func TestDiffDisjointFallsBackWhole(t *testing.T) {
	old, new := diffDisjoint(100000)
	a, b := diffSplitLines(old), diffSplitLines(new)
	edits := diffLineEdits(a, b)
	if len(edits) != 1 || edits[0].End != len(a) || edits[0].ReplEnd != len(b) {
		t.Fatalf("want one whole-file edit, got %d edits", len(edits))
	}
	hunks, omitted := diffTexts(old, new, newHunkBudget())
	if len(hunks) != 0 || omitted != 1 {
		t.Fatalf("a 2.4 MB hunk must be left out of the meta: hunks %d omitted %d", len(hunks), omitted)
	}
	small, smallNew := diffDisjoint(100)
	hunks, omitted = diffTexts(small, smallNew, newHunkBudget())
	if len(hunks) != 1 || omitted != 0 || hunks[0].OldLines != 100 || hunks[0].NewLines != 100 {
		t.Fatalf("small disjoint files: one whole hunk, got %+v omitted %d", hunks, omitted)
	}
}

// The work budget makes any region past it one replacement instead of more search.
func TestDiffWorkBudget(t *testing.T) {
	old, new := diffScattered(2000, 40, 3)
	a, b := diffSplitLines(old), diffSplitLines(new)
	d := &differ{work: 0}
	d.region(0, 0, a, b)
	if len(d.out) != 1 {
		t.Fatalf("no budget: want one whole edit, got %d", len(d.out))
	}
	d = &differ{work: 1 << 30}
	d.region(0, 0, a, b)
	if len(d.out) != 40 {
		t.Fatalf("ample budget: want 40 edits, got %d", len(d.out))
	}
}

func TestDiffAnchors(t *testing.T) {
	a := strings.Split("x a b c y d", " ")
	b := strings.Split("d a c b z x", " ")
	// Unique to both: a b c d x. The longest run in order on both sides: a c or a b.
	got := diffAnchors(a, b)
	if len(got) != 2 || got[0] != [2]int{1, 1} {
		t.Fatalf("anchors %v", got)
	}
	if diffAnchors([]string{"p", "p"}, []string{"p"}) != nil {
		t.Fatal("repeated lines are no anchors")
	}
}

func TestHunkBudget(t *testing.T) {
	old, new := diffScattered(2000, 50, 5)
	all, _ := diffTexts(old, new, newHunkBudget())
	hunks, omitted := diffTexts(old, new, &hunkBudget{hunks: 10, bytes: 1 << 20})
	if len(hunks) != 10 || len(hunks)+omitted != len(all) || fmt.Sprint(hunks) != fmt.Sprint(all[:10]) {
		t.Fatalf("hunk cap: %d shown, %d omitted", len(hunks), omitted)
	}
	hunks, omitted = diffTexts(old, new, &hunkBudget{hunks: 1000, bytes: 1500})
	size := 0
	for _, h := range hunks {
		size += len(h.OldText) + len(h.NewText)
	}
	if size > 1500 || omitted == 0 || len(hunks) == 0 {
		t.Fatalf("byte cap: %d bytes in %d hunks, %d omitted", size, len(hunks), omitted)
	}
}
