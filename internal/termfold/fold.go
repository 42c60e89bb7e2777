// Package termfold is the one fold of a session's records into terminal
// blocks, shared by `dsh run`, `dsh replay` and the chat's scrollback, so the
// three show a session alike: the same messages, cards, call titles and notes.
package termfold

import (
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// Fold draws records on a renderer. It remembers the call whose card is the last
// thing drawn: progress or a result of another call (the model asked for several
// at once) gets a one-line header saying whose it is.
type Fold struct {
	pres    *view.Presenter
	current string
	// Shown are the calls whose change the user was shown as they were asked
	// (dsh run): their diff result is a line, not the hunks again.
	Shown map[string]bool

	// tasks are the open task calls' cards; children the folds of their
	// subagents' sessions, drawn indented under them.
	tasks    map[string]card.Call
	children map[string]*nested
	// ChildLog, if set, reads the records of a child session (a replay, which
	// finds them in its log): a task's result draws them first, as the live
	// stream drew them while it ran.
	ChildLog func(id string, fn func(session.Record) error) error
	// Collapsed draws a subagent's calls one line each (the chat); Expand
	// then draws the last finished task's in full.
	Collapsed bool
	lastTask  struct {
		call, id string
		card     card.Call
	}
}

// nested is a subagent's session being drawn under its task.
type nested struct {
	fold *Fold
	ui   *termui.Renderer
}

// New returns a fold for a session with the tools reg. onError, if set, is told
// when a presenter fails (the card then is the generic fallback).
func New(reg *tool.Registry, onError func(error)) *Fold {
	p := view.NewPresenter(reg)
	p.OnError = onError
	return &Fold{pres: p}
}

// Record draws rec on r. Progress is drawn as live output; a consumer that
// shows it elsewhere (the chat) or not at all (replay) does not pass it.
func (f *Fold) Record(r *termui.Renderer, rec session.Record) error {
	it := f.pres.Present(rec)
	switch rec.Type {
	case session.TypeUser:
		text, chips := attach.View(rec.Text, rec.Content)
		chips = append(chips, attach.ImageChips(rec.Content)...)
		if err := r.User(text); err != nil {
			return err
		}
		for _, c := range chips {
			if err := r.Note(c); err != nil {
				return err
			}
		}
		return nil
	case session.TypeCommand:
		return r.User(rec.Text) // a built-in command as typed
	case session.TypeReply:
		if it.Result != nil { // /diff: its change, as an undo's is drawn
			return f.card(r, it)
		}
		return r.Note(rec.Text)
	case session.TypeAssistant:
		return r.Assistant(rec.Text)
	case session.TypeThinking:
		return r.Thinking(rec.Text)
	case session.TypeToolCall:
		f.current = rec.CallID
		if _, ok := it.Call.(*card.TaskCall); ok {
			if f.tasks == nil {
				f.tasks = map[string]card.Call{}
			}
			f.tasks[rec.CallID] = it.Call
		}
		return r.Call(it.Call)
	case session.TypeProgress:
		if err := f.follow(r, rec.CallID, it.Call); err != nil {
			return err
		}
		return r.Progress(rec.Chunk)
	case session.TypeToolResult:
		if tr, ok := it.Result.(*card.TaskResult); ok {
			if err := f.endTask(r, rec.CallID, tr.Session); err != nil {
				return err
			}
		}
		if err := f.follow(r, rec.CallID, it.Call); err != nil {
			return err
		}
		var raw []card.Content
		isErr := false
		if rec.Result != nil {
			raw, isErr = rec.Result.Content, rec.Result.IsError
		}
		res := it.Result
		if d, ok := res.(*card.DiffResult); ok && d != nil && f.Shown[rec.CallID] && len(d.Diagnostics) == 0 {
			res = &card.GenericResult{Title: "applied as shown"}
		}
		return r.Result(res, raw, isErr)
	case session.TypeTurnEnd:
		return r.Note(TurnNote(rec))
	case session.TypeMode:
		return r.Note("permission mode: " + rec.Mode)
	case session.TypeModel:
		note := "model: " + rec.Model
		if rec.Thinking != "" {
			note += " · thinking " + rec.Thinking
		}
		if rec.Text != "" { // why dsh changed it (a fallback)
			note = rec.Text
		}
		return r.Note(note)
	case session.TypeDamaged:
		return r.Note("a damaged log line: " + rec.Error)
	case session.TypeDecision:
		// The terminal's own answers show in its prompt; another client's
		// (the web page, a second chat) is said where it happened.
		if rec.From == "" || rec.From == "terminal" {
			return nil
		}
		return r.Note(view.DecisionNote(rec))
	case session.TypeTitle:
		return r.Note("renamed: " + rec.Text)
	case session.TypeCompaction, session.TypeInstructions, session.TypeRestore, session.TypeHook:
		// What dsh added to the model's context, shown where it happened.
		return f.card(r, it)
	case session.TypeHeader:
		// Paths in the workspace show relative to it.
		r.SetRoot(rec.Cwd)
	case session.TypePlan, session.TypeAllow, session.TypeCheckpoint:
		// The todo_write result card shows the plan; approvals show in the
		// prompt that made them.
	}
	return nil
}

// card draws a record that is not a call as one: its call card and result.
func (f *Fold) card(r *termui.Renderer, it view.Item) error {
	f.current = ""
	if err := r.Call(it.Call); err != nil {
		return err
	}
	return r.Result(it.Result, nil, false)
}

// Child draws a record of the child session id, the subagent of the task
// call, indented under the task: its calls. Its prompt, its answer and how
// its turn ended are the task's cards' to show.
func (f *Fold) Child(r *termui.Renderer, call, id string, rec session.Record) error {
	if !nestedShows(rec) {
		return nil
	}
	n, ok := f.children[id]
	if !ok {
		if f.children == nil {
			f.children = map[string]*nested{}
		}
		n = &nested{fold: &Fold{pres: f.pres.Nested()}, ui: r.Nested()}
		f.children[id] = n
	}
	if f.Collapsed {
		return f.collapsed(r, call, n, rec)
	}
	if rec.Type != session.TypeHeader {
		if err := f.follow(r, call, f.tasks[call]); err != nil {
			return err
		}
	}
	err := n.fold.Record(n.ui, rec)
	r.Continue()
	return err
}

// nestedShows says whether a child's record is drawn under its task: its
// calls are; its prompt, answer and turn's end are the task's cards'.
func nestedShows(rec session.Record) bool {
	switch rec.Type {
	case session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypeTurnEnd, session.TypeMode, session.TypeModel,
		session.TypeCommand, session.TypeReply:
		return false
	case session.TypeHeader, session.TypeToolCall, session.TypeProgress,
		session.TypeToolResult, session.TypePlan, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
		session.TypeCheckpoint, session.TypeRestore, session.TypeDamaged, session.TypeHook, session.TypeDecision, session.TypeTitle:
	}
	return true
}

// collapsed draws a child's finished call as one line.
func (f *Fold) collapsed(r *termui.Renderer, call string, n *nested, rec session.Record) error {
	switch rec.Type {
	case session.TypeToolCall:
		n.fold.pres.Present(rec)
		return nil
	case session.TypeToolResult, session.TypeHook: // a hook's run is a line, as a call is
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking, session.TypeProgress,
		session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeCompaction,
		session.TypeInstructions, session.TypeCheckpoint, session.TypeRestore, session.TypeDamaged, session.TypeCommand, session.TypeReply, session.TypeDecision, session.TypeTitle:
		return nil
	}
	it := n.fold.pres.Present(rec)
	if it.Call == nil {
		return nil
	}
	if err := f.follow(r, call, f.tasks[call]); err != nil {
		return err
	}
	err := n.ui.CallLine(CallTitle(it.Call), rec.Result == nil || rec.Result.IsError)
	r.Continue()
	return err
}

// ExpandLast returns what draws the calls of the last finished task's
// subagent in full, from its log, under a line that names the task. It reads
// the log and shares nothing with f: it may run elsewhere (off a UI's loop),
// on a renderer of its own.
func (f *Fold) ExpandLast() func(r *termui.Renderer) error {
	t, childLog, pres := f.lastTask, f.ChildLog, f.pres.Nested()
	f.current = ""
	return func(r *termui.Renderer) error {
		if t.id == "" || childLog == nil {
			return r.Note("no finished subagent to expand")
		}
		if err := r.Note("↳ " + CallTitle(t.card) + ": its calls in full"); err != nil {
			return err
		}
		n := &nested{fold: &Fold{pres: pres}, ui: r.Nested()}
		err := childLog(t.id, func(rec session.Record) error {
			if rec.Type == session.TypeProgress || !nestedShows(rec) {
				return nil
			}
			return n.fold.Record(n.ui, rec)
		})
		r.Continue()
		return err
	}
}

// endTask draws, on a replay, the child session of a task before its result,
// and forgets the task.
func (f *Fold) endTask(r *termui.Renderer, call, id string) error {
	_, drawn := f.children[id]
	if f.ChildLog != nil && !drawn && id != "" {
		err := f.ChildLog(id, func(rec session.Record) error {
			if rec.Type == session.TypeProgress {
				return nil
			}
			return f.Child(r, call, id, rec)
		})
		if err != nil {
			_ = r.Note("the subagent's log cannot be read: " + err.Error())
		}
	}
	f.lastTask.call, f.lastTask.id, f.lastTask.card = call, id, f.tasks[call]
	delete(f.children, id)
	delete(f.tasks, call)
	return nil
}

// follow draws which call what comes next belongs to, unless it is obvious.
func (f *Fold) follow(r *termui.Renderer, callID string, c card.Call) error {
	if callID == f.current || c == nil {
		return nil
	}
	f.current = callID
	return r.Note("↳ " + CallTitle(c))
}

// CallTitle is the one-line name of a call card: its title's first line, at
// most 80 characters.
func CallTitle(c card.Call) string {
	var t string
	switch c := c.(type) {
	case *card.GenericCall:
		t = c.Title
	case *card.TerminalCall:
		t = "$ " + c.Title
	case *card.DiffCall:
		t = c.Title
	case *card.PlanCall:
		t = c.Title
	case *card.QuestionCall:
		t = "? " + c.Question
	case *card.TaskCall:
		t = c.Agent + ": " + c.Title
	}
	first, rest, more := strings.Cut(t, "\n")
	r := []rune(first)
	if len(r) > maxTitle {
		return string(r[:maxTitle-1]) + "…"
	}
	if more && strings.TrimSpace(rest) != "" {
		return first + " …"
	}
	return first
}

const maxTitle = 80

// TurnNote says how a turn ended and what it cost, in words for the user: the
// stop reason is a code for programs (it stays in the log and in --json).
func TurnNote(rec session.Record) string {
	var b strings.Builder
	b.WriteString(StopWords(rec.StopReason))
	if u := rec.Usage; u != nil && u.InputTokens+u.OutputTokens > 0 {
		fmt.Fprintf(&b, " · %d tokens in, %d out", u.InputTokens, u.OutputTokens)
	}
	if rec.Error != "" {
		b.WriteString(" · ")
		b.WriteString(rec.Error)
	}
	return b.String()
}

// StopWords is a turn_end's stop reason as the user reads it: the words of
// every consumer (the terminal, the web page).
func StopWords(reason string) string {
	switch reason {
	case "end_turn", "":
		return "done"
	case "max_tokens":
		return "stopped: the model's answer reached its output limit"
	case "refusal":
		return "stopped: the model declined"
	case "max_turns":
		return "stopped: the turn used all its model round trips"
	case "budget":
		return "stopped: the turn used its budget"
	case "timeout":
		return "stopped: the turn reached its time limit"
	case "cancelled":
		return "cancelled"
	case "error":
		return "failed"
	}
	return "ended: " + strings.ReplaceAll(reason, "_", " ")
}
