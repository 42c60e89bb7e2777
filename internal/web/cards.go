package web

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// toolView is a tool call's article: its call card, and its result card once it
// has one (or the raw result when the tool has no rich view), or the output so far
// while it runs.
type toolView struct {
	ElemID, Name string
	State        string // running, done, failed
	Call         *callView
	Result       *resultView
	Progress     textBody
}

// callView is a call card; exactly one variant field is set.
type callView struct {
	Generic  *genericCallView
	Terminal *card.TerminalCall
	Diff     *diffCallView
	Plan     *planView
	Question *card.QuestionCall
	Task     *card.TaskCall
}

// planView is a plan card: its Markdown rendered, the files, the steps.
type planView struct {
	Title string
	Plan  safeHTML
	Files []string
	Steps []string
}

// answerView is what the user answered a plan or a question.
type answerView struct {
	Kind    string // plan-result or question-result
	Outcome string // in the terminal's words
	OK      bool   // approved or answered
}

type genericCallView struct {
	Title, ToolKind string
	Locations       []string
	Content         []contentView
	Input           string // the raw input, indented
}

type diffCallView struct {
	Title string
	Files []diffView
	// Body is false once the result card shows the change as applied.
	Body bool
}

// resultView is a result card, or Raw for a result without one.
type resultView struct {
	Generic  *genericResultView
	Terminal *terminalView
	Read     *readView
	Diff     *diffResultView
	Search   *searchView
	Answer   *answerView
	Task     *taskView
	Raw      *rawView
}

type genericResultView struct {
	Title   string
	Content []contentView
}

type terminalView struct {
	Title    string
	Output   textBody
	Status   string // "exit 0", "SIGKILL"
	OK       bool
	TimedOut bool
	Sandbox  *card.Sandbox // nil: not sandboxed
}

type readView struct {
	Title, Path, Lang string
	Range             string // "lines 10–42 of 120"
	Code              codeBody
}

type diffResultView struct {
	Title       string
	Files       []diffView
	Ins, Del    int
	Paths       int // distinct files: the card sums its counts only for several
	Diagnostics []card.Diagnostic
}

type rawView struct {
	Content []contentView
	IsError bool
}

// contentView is a content block: text (folded) or an image as a data: URL.
type contentView struct {
	Text  textBody
	Image string // a vetted data: URL
	Mime  string
}

func (b *builder) tool(it view.Item, name string) *toolView {
	r := it.Record
	v := &toolView{ElemID: callElemID(r.CallID), Name: name, State: "running"}
	if it.Call != nil {
		v.Call = b.callCard(r.CallID, it.Call)
	}
	if r.Type != session.TypeToolResult || r.Result == nil {
		return v
	}
	v.State = "done"
	if r.Result.IsError {
		v.State = "failed"
	}
	if it.Result == nil {
		v.Result = &resultView{Raw: &rawView{Content: b.contents(r.CallID, r.Result.Content), IsError: r.Result.IsError}}
		return v
	}
	v.Result = b.resultCard(r.CallID, it.Result)
	v.Result.dropTitle(v.Call)
	if t := v.Result.Terminal; t != nil && !t.OK {
		v.State = "failed"
	}
	if v.Call != nil && v.Call.Diff != nil {
		v.Call.Diff.Body = false
	}
	return v
}

// callCard lists every call variant: a new one must be rendered here.
func (b *builder) callCard(callID string, c card.Call) *callView {
	switch c := c.(type) {
	case *card.GenericCall:
		g := &genericCallView{Title: c.Title, ToolKind: string(c.ToolKind), Content: b.contents(callID, c.Content), Input: indentJSON(c.RawInput)}
		for _, l := range c.Locations {
			s := l.Path
			if l.Line != nil {
				s += ":" + strconv.Itoa(*l.Line)
			}
			g.Locations = append(g.Locations, s)
		}
		return &callView{Generic: g}
	case *card.TerminalCall:
		return &callView{Terminal: c}
	case *card.DiffCall:
		return &callView{Diff: &diffCallView{Title: c.Title, Files: b.diffs(callID, c.Diffs, false), Body: true}}
	case *card.PlanCall:
		return &callView{Plan: &planView{Title: c.Title, Plan: markdown(c.Plan), Files: c.Files, Steps: c.Steps}}
	case *card.QuestionCall:
		return &callView{Question: c}
	case *card.TaskCall:
		return &callView{Task: c}
	}
	return nil
}

// resultCard lists every result variant: a new one must be rendered here.
func (b *builder) resultCard(callID string, c card.Result) *resultView {
	switch c := c.(type) {
	case *card.GenericResult:
		return &resultView{Generic: &genericResultView{Title: c.Title, Content: b.contents(callID, c.Content)}}
	case *card.TerminalResult:
		t := &terminalView{Title: c.Title, Output: b.text(callID, c.Output), TimedOut: c.TimedOut, Sandbox: c.Sandbox}
		if f := t.Output.Fold; f != nil && f.Hidden > 0 && c.Lines > 0 {
			// What is hidden of all the command wrote, not of what was kept.
			shown := strings.Count(t.Output.Head, "\n") + 1 + strings.Count(t.Output.Tail, "\n") + 1
			f.Hidden = max(f.Hidden, c.Lines-shown)
		}
		switch {
		case c.ExitCode != nil:
			t.Status, t.OK = "exit "+strconv.Itoa(*c.ExitCode), *c.ExitCode == 0 && !c.TimedOut
		case c.Signal != "":
			t.Status = c.Signal
		default:
			t.Status = "no exit status"
		}
		return &resultView{Terminal: t}
	case *card.ReadResult:
		return &resultView{Read: b.read(callID, c)}
	case *card.DiffResult:
		d := &diffResultView{Title: c.Title, Files: b.diffs(callID, c.Diffs, true), Diagnostics: c.Diagnostics}
		for _, f := range d.Files {
			d.Ins += f.Ins
			d.Del += f.Del
			if f.ShowPath {
				d.Paths++
			}
		}
		return &resultView{Diff: d}
	case *card.SearchResult:
		return &resultView{Search: b.search(callID, c)}
	case *card.PlanResult:
		return &resultView{Answer: &answerView{Kind: "plan-result", Outcome: c.Outcome(), OK: c.Mode != ""}}
	case *card.QuestionResult:
		return &resultView{Answer: &answerView{Kind: "question-result", Outcome: c.Outcome(), OK: !c.Answer.None()}}
	case *card.TaskResult:
		return &resultView{Task: b.task(c)}
	}
	return nil
}

func (b *builder) read(callID string, c *card.ReadResult) *readView {
	v := &readView{Title: c.Title, Path: c.Path, Lang: c.Lang}
	of := strconv.Itoa(c.TotalLines)
	if c.TotalLinesAtLeast {
		of = "at least " + of
	}
	switch n := len(c.Lines); {
	case n == 0 && c.TotalLines == 0:
		v.Range = "empty file"
	case n == 0:
		v.Range = "no lines shown from line " + strconv.Itoa(c.Offset) + " of " + of
	default:
		v.Range = "lines " + strconv.Itoa(c.Lines[0].Number) + "–" + strconv.Itoa(c.Lines[n-1].Number) +
			" of " + of
	}
	v.Code = b.code(callID, c.Lang, c.Lines)
	return v
}

// contents renders content blocks; images as vetted data: URLs (imageURL).
func (b *builder) contents(callID string, cs []card.Content) []contentView {
	var out []contentView
	for _, c := range cs {
		switch c.Type {
		case "text":
			out = append(out, contentView{Text: b.text(callID, c.Text)})
		case "image":
			if u, ok := imageURL(c); ok {
				out = append(out, contentView{Mime: c.MimeType, Image: u})
				continue
			}
			out = append(out, contentView{Text: b.text(callID, "[image: "+c.MimeType+"]")})
		case card.ContentResource:
			out = append(out, contentView{Text: b.text(callID, attach.Chip(c.URI, c.Text))})
		case card.ContentPaste:
			out = append(out, contentView{Text: b.text(callID, attach.PasteChip(c.Text))})
		case card.ContentExpansion:
			out = append(out, contentView{Text: b.text(callID, attach.ExpansionChip(c.URI, c.Text))})
		default:
			out = append(out, contentView{Text: b.text(callID, "["+string(c.Type)+" content]")})
		}
	}
	return out
}

// imageURL is an image block as a data: URL, if it is a raster type with
// well-formed base64: nothing but an image can be smuggled into src.
func imageURL(c card.Content) (string, bool) {
	if !imageMIME[c.MimeType] {
		return "", false
	}
	if _, err := base64.StdEncoding.DecodeString(c.Data); err != nil {
		return "", false
	}
	return "data:" + c.MimeType + ";base64," + c.Data, true
}

var imageMIME = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// indentJSON pretty-prints a call's raw input for display; invalid JSON is shown as is.
func indentJSON(v jsontext.Value) string {
	if len(v) == 0 {
		return ""
	}
	c := v.Clone()
	if err := c.Indent(jsontext.WithIndent("  ")); err != nil {
		return string(v)
	}
	s := string(c)
	if len(s) > maxInputBytes {
		s = clip(s, maxInputBytes) + "\n(input cut)"
	}
	return s
}

// maxInputBytes bounds the raw input shown on a generic call card.
const maxInputBytes = 4 << 10

// fold decides which of n lines a folded body shows: the first head and the last
// tail, hiding the rest. Short bodies and unfolded pages show everything.
func (b *builder) fold(n int) (head, hidden int) {
	if b.full || n <= foldAbove {
		return n, 0
	}
	return foldHead, n - foldHead - foldTail
}

// Folding: a body of more than foldAbove lines shows foldHead lines, an expand
// control and foldTail lines; a shown line is cut at maxLineRunes runes.
const (
	foldAbove    = 40
	foldHead     = 20
	foldTail     = 10
	maxLineRunes = 500
)

// textBody is a folded text: Head, the hidden part's control, Tail.
type textBody struct {
	Head, Tail string
	Fold       *foldView
}

// foldView is the control standing for what a folded body does not show. Src is
// where the unfolded card is served; empty when there is none (running output).
type foldView struct {
	Hidden  int  // lines
	Clipped bool // some shown lines were cut
	Src     string
}

// text folds s; callID names the card the expand control loads ("" for none).
func (b *builder) text(callID, s string) textBody {
	s = strings.TrimSuffix(s, "\n")
	if b.full {
		return textBody{Head: s}
	}
	lines := strings.Split(s, "\n")
	head, hidden := b.fold(len(lines))
	headLines, clipped := clipLines(lines[:head])
	tb := textBody{Head: strings.Join(headLines, "\n")}
	if hidden > 0 {
		tailLines, c2 := clipLines(lines[head+hidden:])
		clipped = clipped || c2
		tb.Tail = strings.Join(tailLines, "\n")
	}
	if hidden > 0 || clipped {
		tb.Fold = &foldView{Hidden: hidden, Clipped: clipped, Src: b.src(callID)}
	}
	return tb
}

// progressBody is a running command's output so far: its last lines.
func (b *builder) progressBody(s string) textBody {
	if b.full {
		return textBody{Head: s}
	}
	lines := strings.Split(s, "\n")
	keep := foldHead + foldTail
	if len(lines) <= keep {
		return textBody{Head: s}
	}
	shown, _ := clipLines(lines[len(lines)-keep:])
	return textBody{Head: strings.Join(shown, "\n"), Fold: &foldView{Hidden: len(lines) - keep}}
}

func (b *builder) src(callID string) string {
	if callID == "" {
		return ""
	}
	return b.callURL(callID)
}

// clipLines cuts lines longer than maxLineRunes runes; it copies only when it cuts.
func clipLines(lines []string) ([]string, bool) {
	var out []string
	for i, l := range lines {
		c := l
		if len(l) > maxLineRunes {
			c = clip(l, maxLineRunes)
		}
		if out == nil && c != l {
			out = append(make([]string, 0, len(lines)), lines[:i]...)
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return lines, false
	}
	return out, true
}

// dropTitle leaves out a result title that repeats the call card's.
func (v *resultView) dropTitle(c *callView) {
	if c == nil {
		return
	}
	var call string
	switch {
	case c.Generic != nil:
		call = c.Generic.Title
	case c.Diff != nil:
		call = c.Diff.Title
	case c.Terminal != nil:
		call = c.Terminal.Title
	case c.Plan != nil, c.Question != nil: // their results have no title
	}
	switch {
	case v.Generic != nil && v.Generic.Title == call:
		v.Generic.Title = ""
	case v.Diff != nil && v.Diff.Title == call:
		v.Diff.Title = ""
	case v.Read != nil && v.Read.Title == call:
		v.Read.Title = ""
	case v.Terminal != nil && v.Terminal.Title == call:
		v.Terminal.Title = ""
	case v.Search != nil && v.Search.Title == call:
		v.Search.Title = ""
	}
}
