package fs

import (
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

const (
	// diffContext is the number of unchanged lines around a change, as in diff -u.
	diffContext = 3
	// The hunk budget of one result's meta, so that a session log never balloons.
	hunkMaxHunks = 500
	hunkMaxBytes = 1 << 20
	// diffWorkFactor bounds the lines handed to the line differ, over all the
	// regions it is asked about, to this multiple of the input's lines. Past it, a
	// region is shown whole: the diff gets coarser, never quadratic.
	diffWorkFactor = 8
	// diffAnchorMin is the region size (lines on both sides) from which a region is
	// first split at lines unique to both sides, before the line differ runs.
	diffAnchorMin = 128
	// diffMaxBytes is the largest changed middle that is split into lines at all;
	// a larger one is one whole-region hunk, which the byte budget then leaves out.
	diffMaxBytes = 256 << 20
)

// hunkBudget bounds the hunks persisted in one result. The first hunk that does
// not fit closes it, so what is shown is always a prefix of the change.
type hunkBudget struct{ hunks, bytes int }

func newHunkBudget() *hunkBudget { return &hunkBudget{hunks: hunkMaxHunks, bytes: hunkMaxBytes} }

// take reserves room for a hunk of size bytes of text, or closes the budget.
func (b *hunkBudget) take(size int) bool {
	if b.hunks == 0 || size > b.bytes {
		b.hunks = 0
		return false
	}
	b.hunks--
	b.bytes -= size
	return true
}

// diffTexts returns the contextual hunks that turn old into new (at most what the
// budget allows) and how many hunks it left out.
func diffTexts(old, new string, budget *hunkBudget) ([]diffHunk, int) {
	if old == new {
		return nil, 0
	}
	// Only the changed middle is split into lines, with diffContext lines of the
	// common head and tail for context: a one-line change to a huge file costs a
	// byte comparison and a few lines.
	head := diffCommonHead(old, new)
	tail := diffCommonTail(old[head:], new[head:])
	head = diffBackLines(old, head, diffContext)
	tail = len(old) - diffForwardLines(old, len(old)-tail, diffContext)
	skipped := strings.Count(old[:head], "\n")
	oldMid, newMid := old[head:len(old)-tail], new[head:len(new)-tail]
	if len(oldMid)+len(newMid) > diffMaxBytes {
		return diffWhole(oldMid, newMid, skipped, budget)
	}
	a, b := diffSplitLines(oldMid), diffSplitLines(newMid)
	return diffGroup(a, b, diffLineEdits(a, b), skipped, budget)
}

// diffWhole is the fallback for a middle too large to split: one hunk, if it fits.
func diffWhole(oldMid, newMid string, skipped int, budget *hunkBudget) ([]diffHunk, int) {
	if !budget.take(len(oldMid) + len(newMid)) {
		return nil, 1
	}
	return []diffHunk{{
		OldStart: skipped + 1, OldLines: hunkCountLines(oldMid),
		NewStart: skipped + 1, NewLines: hunkCountLines(newMid),
		OldText: oldMid, NewText: newMid,
	}}, 0
}

// diffCommonHead returns the start of the first line where a and b differ.
func diffCommonHead(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	// Whole blocks first: string equality is a vectorised memcmp.
	const block = 4096
	for i+block <= n && a[i:i+block] == b[i:i+block] {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return strings.LastIndexByte(a[:i], '\n') + 1
}

// diffCommonTail returns the length of the longest common suffix of a and b that
// starts at a line start in both (a and b themselves start at a line start).
func diffCommonTail(a, b string) int {
	n := min(len(a), len(b))
	const block = 4096
	i := 0
	for i+block <= n && a[len(a)-i-block:len(a)-i] == b[len(b)-i-block:len(b)-i] {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	pa, pb := len(a)-i, len(b)-i
	if i == 0 || (pa == 0 || a[pa-1] == '\n') && (pb == 0 || b[pb-1] == '\n') {
		return i
	}
	k := strings.IndexByte(a[pa:], '\n')
	if k < 0 {
		return 0
	}
	return i - k - 1
}

// diffBackLines moves pos, a line start of s, back n lines.
func diffBackLines(s string, pos, n int) int {
	for ; n > 0 && pos > 0; n-- {
		pos = strings.LastIndexByte(s[:pos-1], '\n') + 1
	}
	return pos
}

// diffForwardLines moves pos, a line start of s, forward n lines.
func diffForwardLines(s string, pos, n int) int {
	for ; n > 0 && pos < len(s); n-- {
		i := strings.IndexByte(s[pos:], '\n')
		if i < 0 {
			return len(s)
		}
		pos += i + 1
	}
	return pos
}

// diffSplitLines splits s into lines that keep their terminators.
func diffSplitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// diffGroup turns line edits into hunks with diffContext lines of context, merging
// edits whose contexts would touch or overlap. skipped is the number of lines
// before a[0] (and b[0]) in the files.
func diffGroup(a, b []string, edits []lcs.Diff, skipped int, budget *hunkBudget) ([]diffHunk, int) {
	var hunks []diffHunk
	omitted := 0
	for i := 0; i < len(edits); {
		j := i
		for j+1 < len(edits) && edits[j+1].Start-edits[j].End <= 2*diffContext {
			j++
		}
		first, last := edits[i], edits[j]
		i = j + 1
		oldFrom := max(0, first.Start-diffContext)
		oldTo := min(len(a), last.End+diffContext)
		// Outside the edits the sides are equal, so the context maps line for line.
		newFrom := first.ReplStart - (first.Start - oldFrom)
		newTo := last.ReplEnd + (oldTo - last.End)
		if !budget.take(diffLinesSize(a[oldFrom:oldTo]) + diffLinesSize(b[newFrom:newTo])) {
			omitted++
			continue
		}
		hunks = append(hunks, diffHunk{
			OldStart: skipped + oldFrom + 1, OldLines: oldTo - oldFrom,
			NewStart: skipped + newFrom + 1, NewLines: newTo - newFrom,
			OldText: strings.Join(a[oldFrom:oldTo], ""), NewText: strings.Join(b[newFrom:newTo], ""),
		})
	}
	return hunks, omitted
}

func diffLinesSize(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// diffLineEdits returns the line edits that turn a into b, in order.
//
// go-udiff's differ bounds its search depth, so on a region with many changes it
// settles the ends and returns the middle as one replacement: on two 10k-line files
// with 100 scattered changes, one hunk of 8706 lines. Large regions are therefore
// first split at lines that occur once on each side (patience anchors, found in
// O(n log n)), and every replacement the differ returns that keeps lines on both
// sides is asked about again. A work budget (diffWorkFactor) keeps the whole
// linear in the input; a region past it, or one the differ can make no progress
// on, is shown whole.
func diffLineEdits(a, b []string) []lcs.Diff {
	d := &differ{work: diffWorkFactor*(len(a)+len(b)) + 4096}
	d.region(0, 0, a, b)
	return d.out
}

type differ struct {
	work int
	out  []lcs.Diff
}

// region diffs a against b, which sit at lines a0 and b0 of the whole input.
func (d *differ) region(a0, b0 int, a, b []string) {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b, a0, b0 = a[1:], b[1:], a0+1, b0+1
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) == 0 && len(b) == 0 {
		return
	}
	if len(a) == 0 || len(b) == 0 || d.work < len(a)+len(b) {
		d.out = append(d.out, lcs.Diff{Start: a0, End: a0 + len(a), ReplStart: b0, ReplEnd: b0 + len(b)})
		return
	}
	d.work -= len(a) + len(b)
	if len(a)+len(b) >= diffAnchorMin {
		if anchors := diffAnchors(a, b); len(anchors) > 0 {
			pa, pb := 0, 0
			for _, an := range anchors {
				d.region(a0+pa, b0+pb, a[pa:an[0]], b[pb:an[1]])
				pa, pb = an[0]+1, an[1]+1
			}
			d.region(a0+pa, b0+pb, a[pa:], b[pb:])
			return
		}
	}
	for _, x := range lcs.DiffLines(a, b) {
		whole := x.Start == 0 && x.End == len(a) && x.ReplStart == 0 && x.ReplEnd == len(b)
		if !whole && x.End > x.Start && x.ReplEnd > x.ReplStart {
			d.region(a0+x.Start, b0+x.ReplStart, a[x.Start:x.End], b[x.ReplStart:x.ReplEnd])
			continue
		}
		d.out = append(d.out, lcs.Diff{Start: a0 + x.Start, End: a0 + x.End, ReplStart: b0 + x.ReplStart, ReplEnd: b0 + x.ReplEnd})
	}
}

// diffAnchors returns the longest sequence of lines that occur exactly once in a
// and once in b and appear in the same order on both sides, as index pairs.
func diffAnchors(a, b []string) [][2]int {
	// One map lookup per line: lines index a table of counts, and a remembers
	// each line's entry.
	type seen struct{ na, nb, ib int }
	index := make(map[string]int32, len(a))
	var table []seen
	ofA := make([]int32, len(a))
	for i, l := range a {
		k, ok := index[l]
		if !ok {
			k = int32(len(table))
			index[l] = k
			table = append(table, seen{})
		}
		table[k].na++
		ofA[i] = k
	}
	for j, l := range b {
		if k, ok := index[l]; ok {
			table[k].nb++
			table[k].ib = j
		}
	}
	var pairs [][2]int
	for i, k := range ofA {
		if s := table[k]; s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{i, s.ib})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest increasing subsequence of the b indices (patience sorting).
	tails := []int{} // tails[k]: index in pairs of the smallest tail of a run of length k+1
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k := sort.Search(len(tails), func(k int) bool { return pairs[tails[k]][1] >= p[1] })
		prev[i] = -1
		if k > 0 {
			prev[i] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([][2]int, len(tails))
	for i, k := tails[len(tails)-1], len(tails)-1; k >= 0; i, k = prev[i], k-1 {
		out[k] = pairs[i]
	}
	return out
}
