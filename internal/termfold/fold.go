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
	last    card.Call
}

// New returns a fold for a session with the tools reg. onError, if set, is told
// when a presenter fails (the card then is the generic fallback).
func New(reg *tool.Registry, onError func(error)) *Fold {
	p := view.NewPresenter(reg)
	p.OnError = onError
	return &Fold{pres: p}
}

// LastCall is the card of the last call drawn.
func (f *Fold) LastCall() card.Call { return f.last }

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
	case session.TypeAssistant:
		return r.Assistant(rec.Text)
	case session.TypeThinking:
		return r.Thinking(rec.Text)
	case session.TypeToolCall:
		f.current, f.last = rec.CallID, it.Call
		return r.Call(it.Call)
	case session.TypeProgress:
		if err := f.follow(r, rec.CallID, it.Call); err != nil {
			return err
		}
		return r.Progress(rec.Chunk)
	case session.TypeToolResult:
		if err := f.follow(r, rec.CallID, it.Call); err != nil {
			return err
		}
		var raw []card.Content
		isErr := false
		if rec.Result != nil {
			raw, isErr = rec.Result.Content, rec.Result.IsError
		}
		return r.Result(it.Result, raw, isErr)
	case session.TypeTurnEnd:
		return r.Note(TurnNote(rec))
	case session.TypeMode:
		return r.Note("permission mode: " + rec.Mode)
	case session.TypeModel:
		note := "model: " + rec.Model
		if rec.Thinking != "" {
			note += " · thinking " + rec.Thinking
		}
		return r.Note(note)
	case session.TypeDamaged:
		return r.Note("a damaged log line: " + rec.Error)
	case session.TypeCompaction, session.TypeInstructions, session.TypeRestore:
		// What dsh added to the model's context, shown where it happened.
		f.current = ""
		if err := r.Call(it.Call); err != nil {
			return err
		}
		return r.Result(it.Result, nil, false)
	case session.TypeHeader:
		// Paths in the workspace show relative to it.
		r.SetRoot(rec.Cwd)
	case session.TypePlan, session.TypeAllow, session.TypeCheckpoint:
		// The todo_write result card shows the plan; approvals show in the
		// prompt that made them.
	}
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
		return "stopped: the subagent used its token budget"
	case "cancelled":
		return "cancelled"
	case "error":
		return "failed"
	}
	return "ended: " + strings.ReplaceAll(reason, "_", " ")
}
