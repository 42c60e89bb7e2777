package fs

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed edit.md
	editDescription string
	//go:embed edit_guidance.md
	editGuidance string
)

// editParams are the arguments of the edit tool.
type editParams struct {
	Path       string `json:"path" jsonschema_description:"The file to edit: relative to the current directory, or absolute."`
	OldString  string `json:"old_string" jsonschema_description:"The exact text to replace. Empty only to create a missing file or fill an empty one."`
	NewString  string `json:"new_string" jsonschema_description:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitzero" jsonschema_description:"Replace every occurrence of old_string instead of requiring exactly one."`
}

// Edit returns the edit tool: an exact string replacement in a file, previewed
// and shown as the contextual hunks it applies.
func Edit() tool.Tool {
	return tool.New(tool.Spec[editParams, diffMeta]{
		Approval:     func(p editParams) tool.Approval { return fileEdits(p.Path) },
		Name:         "edit",
		Hook:         editHook,
		Unhook:       editUnhook,
		HookResponse: editResponse,
		Description:  editDescription,
		Guidance:     editGuidance,
		ReadOnly:     false,
		Permission:   tool.PermEdit,
		Kind:         card.ToolEdit,
		Preview: func(ctx context.Context, env tool.Env, p editParams) (*diffMeta, error) {
			return changePreview(ctx, env, editPlanFor(p, nil))
		},
		Execute: func(ctx context.Context, env tool.Env, p editParams, pv *diffMeta) (tool.Result, *diffMeta, error) {
			return changeExecute(ctx, env, editPlanFor(p, pv))
		},
		PresentCall:   editPresentCall,
		PresentResult: editPresentResult,
		Fold:          func(s *tool.Session, _ editParams, r tool.Result, m *diffMeta) { foldStamp(s, r, diffStampOf(m)) },
		Touched:       func(_ editParams, r tool.Result, m *diffMeta) []string { return changed(r, m) },
	})
}

var editBOM = []byte("\xEF\xBB\xBF")

const (
	// editMaxListed bounds the line numbers an ambiguity error lists.
	editMaxListed = 20
	// Near-match search: old_string longer than editNearMaxLines lines gets no
	// suggestion, and the search stops after comparing editNearBudget bytes.
	editNearMaxLines = 1000
	editNearBudget   = 16 << 20
	// editNearShow bounds the lines and characters of a suggested region.
	editNearShowLines = 30
	editNearShowChars = 200
)

func editPlanFor(p editParams, pv *diffMeta) func(context.Context, tool.Env) (changePlan, error) {
	return func(ctx context.Context, env tool.Env) (changePlan, error) {
		if p.OldString == p.NewString {
			return changePlan{}, refusef("old_string and new_string are identical: there is nothing to change in %s.", p.Path)
		}
		cur, err := loadCurrent(ctx, env, p.Path, "edit", pv)
		if err != nil {
			return changePlan{}, err
		}
		pl := changePlan{cur: cur, path: p.Path, verb: "edit", title: "Edit"}
		if cur.stamp == nil {
			if p.OldString != "" {
				return changePlan{}, refusef("%s does not exist. To create it, use write, or edit with an empty old_string.", p.Path)
			}
			msg := fmt.Sprintf("Created %s (%s).", p.Path, writeLines(p.NewString))
			pl.run = writeRun(p.NewString, diffMeta{Path: p.Path, Created: true, Hunks: []diffHunk{}}, msg)
			return pl, nil
		}
		bom, text, old, repl := editPrepare(cur.data, []byte(p.OldString), []byte(p.NewString))
		if len(old) == 0 {
			if len(text) > 0 {
				return changePlan{}, refusef("old_string is empty but %s is not: give the exact text to replace. (An empty old_string only creates a missing file or fills an empty one.)", p.Path)
			}
			pl.run = editFillRun(p, bom)
			return pl, nil
		}
		if bytes.Equal(old, repl) {
			return changePlan{}, refusef("old_string and new_string differ only in line endings, and %s uses CRLF for both: there is nothing to change.", p.Path)
		}
		first, err := editLocate(text, old, p.ReplaceAll)
		switch {
		case errors.Is(err, errEditNotFound):
			return changePlan{}, refusef("%s", editNotFoundMessage(p.Path, text, old))
		case errors.Is(err, errEditAmbiguous):
			return changePlan{}, refusef("%s", editAmbiguousMessage(p.Path, text, old))
		}
		pl.run = func(w io.Writer) (diffMeta, string, error) {
			if bom {
				if _, err := w.Write(editBOM); err != nil {
					return diffMeta{}, "", err
				}
			}
			out, err := editReplace(w, text, old, repl, first, p.ReplaceAll, newHunkBudget())
			if err != nil {
				return diffMeta{}, "", err
			}
			msg := fmt.Sprintf("Edited %s: replaced 1 occurrence at line %d.", p.Path, out.firstLine)
			if out.sites > 1 {
				msg = fmt.Sprintf("Edited %s: replaced %d occurrences (the first at line %d).", p.Path, out.sites, out.firstLine)
			}
			return diffMeta{Path: p.Path, Sites: out.sites, Hunks: out.hunks, Omitted: out.omitted}, msg, nil
		}
		return pl, nil
	}
}

// editFillRun writes new_string into an existing empty file (keeping a lone BOM).
func editFillRun(p editParams, bom bool) func(io.Writer) (diffMeta, string, error) {
	return func(w io.Writer) (diffMeta, string, error) {
		if bom {
			if _, err := w.Write(editBOM); err != nil {
				return diffMeta{}, "", err
			}
		}
		if _, err := io.WriteString(w, p.NewString); err != nil {
			return diffMeta{}, "", err
		}
		hunks, omitted := diffTexts("", p.NewString, newHunkBudget())
		msg := fmt.Sprintf("Edited %s: filled the empty file (%s).", p.Path, writeLines(p.NewString))
		return diffMeta{Path: p.Path, Sites: 1, Hunks: hunkNonNil(hunks), Omitted: omitted}, msg, nil
	}
}

func hunkNonNil(h []diffHunk) []diffHunk {
	if h == nil {
		return []diffHunk{}
	}
	return h
}

// editPrepare splits a UTF-8 BOM off the file and, when the file uses CRLF line
// endings, writes old_string and new_string with CRLF too: a model writes LF, and
// the file keeps its line endings.
func editPrepare(data, old, repl []byte) (bom bool, text, oldOut, replOut []byte) {
	text, bom = bytes.CutPrefix(data, editBOM)
	if editIsCRLF(text) {
		old, repl = editToCRLF(old), editToCRLF(repl)
	}
	return bom, text, old, repl
}

// editIsCRLF reports whether text's first line ends in CRLF.
func editIsCRLF(text []byte) bool {
	i := bytes.IndexByte(text, '\n')
	return i > 0 && text[i-1] == '\r'
}

// editToCRLF turns every bare LF of s into CRLF.
func editToCRLF(s []byte) []byte {
	n := bytes.Count(s, []byte("\n")) - bytes.Count(s, []byte("\r\n"))
	if n == 0 {
		return s
	}
	out := make([]byte, 0, len(s)+n)
	for i, c := range s {
		if c == '\n' && (i == 0 || s[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

var (
	errEditNotFound  = errors.New("old_string not found")
	errEditAmbiguous = errors.New("old_string matches more than once")
)

// editLocate returns the offset of the first match of old. Without all, a second
// match — overlapping ones included, as either could be meant — is ambiguous.
func editLocate(text, old []byte, all bool) (int, error) {
	first := bytes.Index(text, old)
	if first < 0 {
		return -1, errEditNotFound
	}
	if !all && bytes.Contains(text[first+1:], old) {
		return -1, errEditAmbiguous
	}
	return first, nil
}

// editOutcome is what a replacement did.
type editOutcome struct {
	sites     int
	firstLine int
	hunks     []diffHunk
	omitted   int // sites in no persisted hunk
}

// editReplace writes text to w with old replaced by repl at first (and, with all,
// at every later non-overlapping match), and returns the hunks it applied. It
// streams: the text is never copied whole and never split into lines; line
// numbers come from counting newlines between sites.
func editReplace(w io.Writer, text, old, repl []byte, first int, all bool, budget *hunkBudget) (editOutcome, error) {
	t := &editTracker{text: text, old: old, repl: repl, budget: budget,
		perSite: bytes.Count(repl, []byte("\n")) - bytes.Count(old, []byte("\n")),
		replNL:  bytes.HasSuffix(repl, []byte("\n"))}
	pos, s := 0, first
	for {
		if _, err := w.Write(text[pos:s]); err != nil {
			return editOutcome{}, err
		}
		if _, err := w.Write(repl); err != nil {
			return editOutcome{}, err
		}
		t.site(s)
		pos = s + len(old)
		if !all {
			break
		}
		i := bytes.Index(text[pos:], old)
		if i < 0 {
			break
		}
		s = pos + i
	}
	if _, err := w.Write(text[pos:]); err != nil {
		return editOutcome{}, err
	}
	if t.open {
		t.close()
	}
	return editOutcome{sites: t.sites, firstLine: t.firstLine, hunks: hunkNonNil(t.hunks), omitted: t.omitted}, nil
}

// editTracker turns the sites of a replacement, in order, into contextual hunks.
// A site affects the lines from the start of the line it begins on to the end of
// the line holding the first newline at or after its end (so a site ending in a
// newline also takes the following line, whose start its replacement may join,
// unless the replacement ends in a newline too). Sites whose
// affected lines come within 2×diffContext lines of each other share a hunk.
// Every scan is bounded by the previous one's end, so the whole is linear in text.
type editTracker struct {
	text, old, repl []byte
	budget          *hunkBudget
	perSite         int  // lines a site adds (negative: removes)
	replNL          bool // the replacement ends in a newline

	nlPos, nl int // nl newlines in text[:nlPos]
	sites     int
	firstLine int
	delta     int // lines added by the sites of closed hunks
	ctxEnd    int // end of the last closed hunk's context
	full      bool
	hunks     []diffHunk
	omitted   int

	// The open hunk: affected bytes [regStart, regEnd), lines [l0, l1), and its
	// sites between firstSite and lastEnd.
	open                    bool
	regStart, regEnd        int
	l0, l1                  int
	firstSite, lastEnd, hnS int
}

// linesBefore returns the newlines in text[:x]; x never decreases between calls.
func (t *editTracker) linesBefore(x int) int {
	t.nl += bytes.Count(t.text[t.nlPos:x], []byte("\n"))
	t.nlPos = x
	return t.nl
}

func (t *editTracker) site(s int) {
	e := s + len(t.old)
	t.sites++
	if t.full {
		t.omitted++
		return
	}
	if t.open && s < t.regEnd { // on the open hunk's last line
		t.hnS++
		t.lastEnd = e
		if e >= t.regEnd {
			t.extend(e)
		}
		return
	}
	lo := t.ctxEnd
	if t.open {
		lo = t.regEnd
	}
	regStart := lo + bytes.LastIndexByte(t.text[lo:s], '\n') + 1
	l0 := t.linesBefore(regStart)
	if t.sites == 1 {
		t.firstLine = l0 + 1
	}
	if t.open && l0-t.l1 <= 2*diffContext {
		t.hnS++
		t.lastEnd = e
		t.extend(e)
		return
	}
	if t.open {
		t.close()
		if t.full {
			t.omitted++
			return
		}
	}
	t.open, t.regStart, t.l0, t.firstSite, t.lastEnd, t.hnS = true, regStart, l0, s, e, 1
	t.extend(e)
}

// extend moves the open hunk's end to the line holding the first newline at or
// after e — or to e itself when the site ends a line and its replacement does
// too, so the following line keeps its start.
func (t *editTracker) extend(e int) {
	i := bytes.IndexByte(t.text[e:], '\n')
	if e > 0 && t.text[e-1] == '\n' && t.replNL {
		t.regEnd = e
	} else if i < 0 {
		t.regEnd = len(t.text)
	} else {
		t.regEnd = e + i + 1
	}
	t.l1 = t.linesBefore(t.regEnd)
	if t.regEnd == len(t.text) && t.text[len(t.text)-1] != '\n' {
		t.l1++ // the last line has no newline
	}
}

// close adds diffContext lines on each side of the open hunk and persists it if
// the budget allows; otherwise this and every later site go uncounted in hunks.
func (t *editTracker) close() {
	t.open = false
	start, before := t.regStart, 0
	for ; before < diffContext && start > t.ctxEnd; before++ {
		start = t.ctxEnd + bytes.LastIndexByte(t.text[t.ctxEnd:start-1], '\n') + 1
	}
	end, after := t.regEnd, 0
	for ; after < diffContext && end < len(t.text); after++ {
		i := bytes.IndexByte(t.text[end:], '\n')
		if i < 0 {
			end = len(t.text)
		} else {
			end += i + 1
		}
	}
	t.ctxEnd = end
	oldSize := end - start
	newSize := oldSize + t.hnS*(len(t.repl)-len(t.old))
	if !t.budget.take(oldSize + newSize) {
		t.full = true
		t.omitted += t.hnS
		return
	}
	var nb strings.Builder
	nb.Grow(newSize)
	nb.Write(t.text[start:t.firstSite])
	// Matching again from the first site finds exactly this hunk's sites: the
	// scan that found them was greedy from there too.
	seg := t.text[t.firstSite:t.lastEnd]
	for {
		i := bytes.Index(seg, t.old)
		if i < 0 {
			break
		}
		nb.Write(seg[:i])
		nb.Write(t.repl)
		seg = seg[i+len(t.old):]
	}
	nb.Write(seg)
	nb.Write(t.text[t.lastEnd:end])
	oldStart := t.l0 - before + 1
	newText := nb.String()
	t.hunks = append(t.hunks, diffHunk{
		OldStart: oldStart, OldLines: t.l1 - t.l0 + before + after,
		NewStart: oldStart + t.delta, NewLines: hunkCountLines(newText),
		OldText: string(t.text[start:end]), NewText: newText,
	})
	t.delta += t.hnS * t.perSite
}

// editAmbiguousMessage says how often and where old matches.
func editAmbiguousMessage(path string, text, old []byte) string {
	count, nl, pos, lastLine := 0, 0, 0, 0
	more := false
	var lines []string
	for i := 0; ; i++ {
		j := bytes.Index(text[i:], old)
		if j < 0 {
			break
		}
		i += j
		count++
		nl += bytes.Count(text[pos:i], []byte("\n"))
		pos = i
		if line := nl + 1; line != lastLine {
			if len(lines) < editMaxListed {
				lines = append(lines, strconv.Itoa(line))
			} else {
				more = true
			}
			lastLine = line
		}
	}
	where := "lines " + strings.Join(lines, ", ")
	if len(lines) == 1 {
		where = "line " + lines[0]
	}
	if more {
		where += ", …"
	}
	return fmt.Sprintf("old_string matches %d times in %s (%s). Include more surrounding lines in old_string to make the match unique, or set replace_all to change every occurrence.", count, path, where)
}

// editNear is the region of a file most like old_string, ignoring whitespace:
// lines [start, start+lines) (1-based) of which score match.
type editNear struct {
	start, lines, score int
	offset              int // byte offset of the region in text
}

// editNotFoundMessage explains a failed match and shows the closest region.
func editNotFoundMessage(path string, text, old []byte) string {
	n, ok := editNearMatch(text, old)
	if !ok {
		return fmt.Sprintf("old_string was not found in %s, and no similar lines were either. Read the file again and copy the text to replace exactly.", path)
	}
	how := "differs only in whitespace"
	if n.score < n.lines {
		how = fmt.Sprintf("has %d of its %d lines equal ignoring whitespace", n.score, n.lines)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "old_string was not found in %s. The closest match, at %s, %s:\n", path, editLineRange(n.start, n.lines), how)
	rest := text[n.offset:]
	for i := 0; i < n.lines && i < editNearShowLines && len(rest) > 0; i++ {
		line := rest
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			rest = nil
		}
		fmt.Fprintf(&b, "%d: %s\n", n.start+i, editClip(bytes.TrimSuffix(line, []byte("\r"))))
	}
	if n.lines > editNearShowLines {
		fmt.Fprintf(&b, "… (%d more lines)\n", n.lines-editNearShowLines)
	}
	b.WriteString("Copy old_string exactly from the file, with its indentation and line breaks (the \"N: \" prefixes are not part of the file), then retry.")
	return b.String()
}

func editLineRange(start, lines int) string {
	if lines == 1 {
		return "line " + strconv.Itoa(start)
	}
	return fmt.Sprintf("lines %d-%d", start, start+lines-1)
}

// editClip cuts a line for display, on a rune boundary.
func editClip(line []byte) string {
	// The message travels as JSON: bytes that are not UTF-8 are shown as U+FFFD.
	if len(line) <= editNearShowChars {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	cut := editNearShowChars
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(line[:cut]), "\uFFFD") + "…"
}

// editNearMatch finds the region of text most like old when lines are compared
// with all whitespace removed: the first and last lines of old may be the end and
// start of a file line (old_string often starts or stops mid-line), the others
// must be equal. Candidate regions are those that align a distinctive line of old
// with an equal file line; a budget of compared bytes bounds the cost, and the
// file is walked once, never split into an array of lines.
func editNearMatch(text, old []byte) (editNear, bool) {
	want := editNormLines(old)
	k := len(want)
	if k == 0 || k > editNearMaxLines {
		return editNear{}, false
	}
	// Lines of three or more non-space bytes are distinctive enough to anchor on.
	anchors := map[string][]int{}
	for i, w := range want {
		if len(w) >= 3 {
			anchors[w] = append(anchors[w], i)
		}
	}
	if len(anchors) == 0 {
		return editNear{}, false
	}
	var best editNear
	// Rings over the last k file lines, which hold every start a line can anchor:
	// the byte offset of file line j, and j+1 once a region starting there is scored.
	starts, tried := make([]int, k), make([]int, k)
	budget := editNearBudget
	var norm []byte
	pos := 0
	for j := 0; pos < len(text) && budget > 0; j++ {
		starts[j%k] = pos
		end := bytes.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos
		}
		norm = editNormAppend(norm[:0], text[pos:end])
		for _, i := range anchors[string(norm)] {
			st := j - i
			if st < 0 || tried[st%k] == st+1 {
				continue
			}
			tried[st%k] = st + 1
			score := editNearScore(text[starts[st%k]:], want, &budget)
			if score > best.score {
				best = editNear{start: st + 1, lines: k, score: score, offset: starts[st%k]}
				if score == k {
					return best, true
				}
			}
		}
		pos = end + 1
	}
	// A region sharing fewer than half of old's lines is not worth showing.
	return best, best.score > 0 && 2*best.score >= k
}

// editNearScore counts the lines of the region starting at text that match want.
func editNearScore(text []byte, want []string, budget *int) int {
	score := 0
	var norm []byte
	for i, w := range want {
		if len(text) == 0 && i > 0 || *budget <= 0 {
			break
		}
		line := text
		if j := bytes.IndexByte(text, '\n'); j >= 0 {
			line, text = text[:j], text[j+1:]
		} else {
			text = nil
		}
		*budget -= len(line) + 1
		norm = editNormAppend(norm[:0], line)
		got := string(norm)
		var ok bool
		switch {
		case len(want) == 1:
			ok = strings.Contains(got, w)
		case i == 0:
			ok = strings.HasSuffix(got, w)
		case i == len(want)-1:
			ok = strings.HasPrefix(got, w)
		default:
			ok = got == w
		}
		if ok {
			score++
		}
	}
	return score
}

// editNormLines splits old into lines with whitespace removed; a final newline
// ends the last line rather than starting an empty one.
func editNormLines(old []byte) []string {
	old = bytes.TrimSuffix(old, []byte("\n"))
	var out []string
	for _, l := range bytes.Split(old, []byte("\n")) {
		out = append(out, string(editNormAppend(nil, l)))
	}
	return out
}

// editNormAppend appends line to dst without its ASCII whitespace.
func editNormAppend(dst, line []byte) []byte {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
