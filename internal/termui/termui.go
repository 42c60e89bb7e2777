// Package termui renders cards and conversation items as terminal text.
//
// It is the terminal consumer of the card union: one switch per side over every
// variant, each drawing the card for a reader in a terminal — a read window with a
// line-number gutter and syntax highlighting, diff hunks in colour with line numbers,
// a command with its output and exit status, generic cards dimmed. Long bodies fold
// to a head and a tail, every line fits the width, and text that comes from files or
// commands is cleaned so it cannot move the cursor or change the terminal's state.
//
// termui reads no process state: the caller decides colour (NO_COLOR, isatty) and
// width and passes them in [Options].
package termui

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Options configure a Renderer. Zero values take the defaults.
type Options struct {
	// Color enables ANSI styling. Without it the output holds no escape sequence.
	Color bool
	// Width is the terminal width in columns: 100 when zero, at least 20.
	Width int
	// A body longer than FoldAbove lines (default 40) shows its first FoldHead (20)
	// and last FoldTail (10) lines around a "… N more lines" marker.
	FoldAbove, FoldHead, FoldTail int
	// Root, when set, is the workspace: paths under it show relative to it.
	Root string
}

const (
	defaultWidth = 100
	minWidth     = 20
	indent       = "  "
)

// Select Graphic Rendition parameters. SGR and OSC 8 hyperlinks (search cards) are
// the only escape sequences termui writes.
const (
	sgrBold   = "1"
	sgrDim    = "2"
	sgrItalic = "2;3"
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrCyan   = "36"
)

// Renderer writes cards and conversation items to w. It is safe for concurrent use:
// each item is written whole, so a progress chunk from one goroutine never lands in
// the middle of a card from another.
type Renderer struct {
	w                           io.Writer
	color                       bool
	width                       int
	foldAbove, foldHead, foldTl int

	root atomic.Pointer[string] // paths under it show relative

	mu      sync.Mutex
	started bool // something was written: separate the next block by a blank line
	live    stream
}

// New returns a Renderer writing to w.
func New(w io.Writer, o Options) *Renderer {
	r := &Renderer{w: w, color: o.Color, width: o.Width,
		foldAbove: o.FoldAbove, foldHead: o.FoldHead, foldTl: o.FoldTail}
	if r.width == 0 {
		r.width = defaultWidth
	}
	r.width = max(r.width, minWidth)
	if o.Root != "" {
		r.SetRoot(o.Root)
	}
	if r.foldAbove <= 0 {
		r.foldAbove = 40
	}
	if r.foldHead <= 0 {
		r.foldHead = 20
	}
	if r.foldTl <= 0 {
		r.foldTl = 10
	}
	return r
}

// SetRoot makes paths under dir show relative to it (the session's workspace;
// its header names it).
func (r *Renderer) SetRoot(dir string) {
	r.root.Store(&dir)
}

// path is p as the user reads it: relative to the root when under it.
func (r *Renderer) path(p string) string {
	root := r.root.Load()
	if root == nil || *root == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(*root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

// Resize makes the blocks written from now on fit width columns (0: the default).
func (r *Renderer) Resize(width int) {
	if width == 0 {
		width = defaultWidth
	}
	r.mu.Lock()
	r.width = max(width, minWidth)
	r.mu.Unlock()
}

// Started reports whether a block was written: the next is separated from it.
func (r *Renderer) Started() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// Continue separates the next block as if one came before it: the caller wrote
// one through another renderer.
func (r *Renderer) Continue() {
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
}

// span is a run of text in one style; sgr "" is unstyled.
type span struct{ sgr, text string }

// row is one output line: a trusted prefix (indent, gutter, markers) written as is,
// and an untrusted body that is cleaned and cut to the columns the prefix leaves.
// With colour on, link makes the body an OSC 8 hyperlink to a URI and prefixURI
// some prefix spans (by index); the URIs must hold no control bytes.
type row struct {
	prefix, body []span
	link         string
	prefixURI    map[int]string
}

func textRow(prefix []span, sgr, text string) row {
	return row{prefix: prefix, body: []span{{sgr, text}}}
}

// Call renders a call card: the tool call as proposed or running.
func (r *Renderer) Call(c card.Call) error {
	rows, err := r.callRows(c)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = stream{}
	return r.block(rows)
}

// Approval renders a call as the user is asked to approve it: like Call, but a
// proposed change shows its hunks in full, with both line numbers and hunk
// headers, as the result card will show them applied.
func (r *Renderer) Approval(c card.Call) error {
	rows, err := r.callRows(c)
	if err != nil {
		return err
	}
	if d, ok := c.(*card.DiffCall); ok && d != nil {
		rows = append(rows, r.diffRows(d.Diffs, allHunks(d.Diffs), true)...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = stream{}
	return r.block(rows)
}

// Proposed renders, right under a call's line, the change it proposes, as
// Approval does: a line-by-line consumer shows it before it asks. Only a diff
// call proposes one.
func (r *Renderer) Proposed(c card.Call) error {
	d, ok := c.(*card.DiffCall)
	if !ok || d == nil {
		return nil
	}
	rows := r.diffRows(d.Diffs, allHunks(d.Diffs), true)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attach(rows)
}

// Result renders a finished call. res is the result card, or nil when the tool has no
// rich view: then the raw content is shown like a generic card, in red if isError.
// A terminal card whose output was already streamed through Progress since the last
// Call shows only its exit status.
func (r *Renderer) Result(res card.Result, raw []card.Content, isError bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rows []row
	if res == nil {
		rows = r.contentRows(raw, r.bodySGR(isError))
	} else {
		var err error
		if rows, err = r.resultRows(res, isError); err != nil {
			return err
		}
	}
	return r.attach(rows)
}

// User renders a user message.
func (r *Renderer) User(text string) error {
	return r.prose(text, "› ", sgrBold, sgrBold)
}

// Assistant renders the model's text, which is Markdown.
func (r *Renderer) Assistant(text string) error {
	return r.Markdown(text)
}

// Thinking renders the model's reasoning, dimmed.
func (r *Renderer) Thinking(text string) error {
	return r.prose(text, indent, "", sgrItalic)
}

// Note renders a message from the harness (turn end, an error).
func (r *Renderer) Note(text string) error {
	return r.prose(text, "· ", sgrDim, sgrDim)
}

// Plan renders the session's todo list as a checklist.
func (r *Renderer) Plan(entries []tool.PlanEntry) error {
	rows := []row{textRow(nil, sgrBold, "Plan")}
	for _, e := range entries {
		mark, sgr := "[?] ", sgrDim
		switch e.Status {
		case "pending":
			mark, sgr = "[ ] ", ""
		case "in_progress":
			mark, sgr = "[>] ", sgrBold
		case "completed":
			mark, sgr = "[x] ", sgrDim
		}
		body := []span{{sgr, e.Content}}
		if e.Priority == "high" {
			body = append(body, span{sgrRed, " (high)"})
		}
		rows = append(rows, row{prefix: []span{{"", indent}, {sgr, mark}}, body: body})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.block(rows)
}

// prose renders wrapped text; the first line carries mark, the others as many spaces.
func (r *Renderer) prose(text, mark, markSGR, sgr string) error {
	pad := strings.Repeat(" ", width(mark))
	var rows []row
	for i, l := range wrap(text, r.width-width(mark)) {
		p := span{"", pad}
		if i == 0 {
			p = span{markSGR, mark}
		}
		rows = append(rows, textRow([]span{p}, sgr, l))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.block(rows)
}

// block writes rows as a new block, a blank line after whatever came before.
func (r *Renderer) block(rows []row) error {
	var b strings.Builder
	r.endStream(&b)
	if r.started {
		b.WriteByte('\n')
	}
	r.started = true
	r.put(&b, rows)
	return r.write(b.String())
}

// attach writes rows right under the block before them.
func (r *Renderer) attach(rows []row) error {
	var b strings.Builder
	r.endStream(&b)
	r.started = true
	r.put(&b, rows)
	return r.write(b.String())
}

func (r *Renderer) write(s string) error {
	if s == "" {
		return nil
	}
	if _, err := io.WriteString(r.w, s); err != nil {
		return fmt.Errorf("termui: %w", err)
	}
	return nil
}

// put writes rows, each on its own line and never wider than the width: a body
// that does not fit wraps onto continuation lines under itself, so nothing is cut.
func (r *Renderer) put(b *strings.Builder, rows []row) {
	p := painter{r: r, b: b}
	for _, rw := range rows {
		used := 0
		for i, s := range rw.prefix {
			if uri := rw.prefixURI[i]; uri != "" && r.color {
				p.linked(uri, s)
			} else {
				p.add(s)
			}
			used += width(s.text)
		}
		if rw.link != "" && r.color {
			p.flush()
			p.b.WriteString(osc8(rw.link))
		}
		budget := max(r.width-used, 1)
		body := make([]span, len(rw.body))
		col := 0
		for i, s := range rw.body {
			body[i].sgr = s.sgr
			body[i].text, col = clean(s.text, col)
		}
		if col <= budget {
			for _, s := range body {
				p.add(s)
			}
		} else {
			r.wrapBody(&p, b, body, used, budget)
		}
		p.flush()
		if rw.link != "" && r.color {
			p.b.WriteString(osc8(""))
		}
		b.WriteByte('\n')
	}
}

// wrapSlack is how far back from the width a wrapped line may break at a space
// rather than in the middle of a word.
const wrapSlack = 16

// wrapBody writes a body too wide for its budget over several lines, each
// continuation indented by pad columns so it sits under the body's start. The
// breaks are chosen on the body's text alone, so colour never changes them.
func (r *Renderer) wrapBody(p *painter, b *strings.Builder, body []span, pad, budget int) {
	var plain strings.Builder
	for _, s := range body {
		plain.WriteString(s.text)
	}
	breaks := wrapPoints(plain.String(), budget)
	off, next, skip := 0, 0, 0 // byte offset into the plain text; index into breaks; bytes to drop
	for _, s := range body {
		t := s.text
		for t != "" {
			if skip > 0 { // the space the line broke at, maybe at the start of this span
				t, off, skip = t[1:], off+1, skip-1
				continue
			}
			n := len(t)
			if next < len(breaks) && breaks[next].at-off < n {
				n = breaks[next].at - off
			}
			p.add(span{s.sgr, t[:n]})
			t, off = t[n:], off+n
			if next < len(breaks) && off == breaks[next].at {
				p.flush()
				b.WriteByte('\n')
				p.add(span{"", strings.Repeat(" ", pad)})
				skip = breaks[next].skip
				next++
			}
		}
	}
}

// wrapPoint is where a wrapped line ends (a byte offset) and how many bytes
// after it (the space it broke at) are dropped.
type wrapPoint struct{ at, skip int }

// wrapPoints breaks cleaned text into lines of at most w columns, preferring to
// break after a space near the end of a line.
func wrapPoints(s string, w int) []wrapPoint {
	var out []wrapPoint
	off := 0
	for wider(s[off:], w) {
		head := cut(s[off:], w)
		if head == "" { // a rune wider than w
			_, n := utf8.DecodeRuneInString(s[off:])
			head = s[off : off+n]
		}
		skip := 0
		if rest := s[off+len(head):]; rest != "" && rest[0] == ' ' {
			skip = 1
		} else if i := strings.LastIndexByte(head, ' '); i > 0 && width(head[i+1:]) < wrapSlack {
			head, skip = head[:i], 1
		}
		off += len(head)
		out = append(out, wrapPoint{off, skip})
		off += skip
	}
	return out
}

// painter joins neighbouring spans of one style so each run is styled once.
type painter struct {
	r   *Renderer
	b   *strings.Builder
	sgr string
	run strings.Builder
}

func (p *painter) add(s span) {
	if s.text == "" {
		return
	}
	if s.sgr != p.sgr {
		p.flush()
		p.sgr = s.sgr
	}
	p.run.WriteString(s.text)
}

// linked writes s as a hyperlink to uri.
func (p *painter) linked(uri string, s span) {
	p.flush()
	p.b.WriteString(osc8(uri))
	p.add(s)
	p.flush()
	p.b.WriteString(osc8(""))
}

// osc8 opens a hyperlink to uri, or closes one when uri is "".
func osc8(uri string) string { return "\x1b]8;;" + uri + "\x1b\\" }

// flush writes the pending run, styled when colour is on.
func (p *painter) flush() {
	text := p.run.String()
	p.run.Reset()
	if text == "" {
		return
	}
	if !p.r.color || p.sgr == "" {
		p.b.WriteString(text)
		return
	}
	p.b.WriteString("\x1b[")
	p.b.WriteString(p.sgr)
	p.b.WriteByte('m')
	p.b.WriteString(text)
	p.b.WriteString("\x1b[0m")
}

// fold says how many leading items of n to show and how many to hide after them
// (the rest are the tail).
func (r *Renderer) fold(n int) (head, hidden int) {
	if n <= r.foldAbove || n <= r.foldHead+r.foldTl {
		return n, 0
	}
	return r.foldHead, n - r.foldHead - r.foldTl
}

// foldRow is the marker standing for hidden lines.
func foldRow(hidden int) row {
	return textRow(indented, sgrDim, "… "+plural(hidden, "more line"))
}

// foldRows folds the rows of a body.
func (r *Renderer) foldRows(rows []row) []row {
	head, hidden := r.fold(len(rows))
	if hidden == 0 {
		return rows
	}
	out := append(rows[:head:head], foldRow(hidden))
	return append(out, rows[head+hidden:]...)
}
