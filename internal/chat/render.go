package chat

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// scrollback turns a session's records into the text printed above the chat,
// once: the terminal keeps it, the chat does not, so a session of any length
// costs only its open calls. Live and on resume it is fed the same records and
// skips the same progress, so a card folds the same in both.
type scrollback struct {
	pres  *view.Presenter
	opts  termui.Options
	out   bytes.Buffer // what is still to be printed
	wrote bool         // a block was printed: separate the next by a blank line
	// current is the call whose card is the last thing printed; a result of
	// another call (several calls at once) gets a line saying whose it is.
	current string
	last    card.Call // the card of the last call printed
	warn    func(string)
}

func newScrollback(reg *tool.Registry, o termui.Options, warn func(string)) *scrollback {
	s := &scrollback{opts: o, warn: warn}
	s.present(reg)
	return s
}

// present makes the records of a session with the tools reg from now on.
func (s *scrollback) present(reg *tool.Registry) {
	if reg == nil {
		s.pres = nil
		return
	}
	s.pres = view.NewPresenter(reg)
	s.pres.OnError = func(err error) { s.note("presenter: " + err.Error()) }
	s.current, s.last = "", nil
}

// draw renders one block with a fresh renderer (so a resize takes effect at the
// next block) and queues it.
func (s *scrollback) draw(f func(r *termui.Renderer) error) {
	var b bytes.Buffer
	if err := f(termui.New(&b, s.opts)); err != nil {
		if s.warn != nil {
			s.warn(err.Error())
		}
		return
	}
	if b.Len() == 0 {
		return
	}
	if s.wrote {
		s.out.WriteByte('\n')
	}
	s.wrote = true
	s.out.Write(b.Bytes())
}

// drawAttached renders a block that belongs right under the one before it.
func (s *scrollback) drawAttached(f func(r *termui.Renderer) error) {
	wrote := s.wrote
	s.wrote = false
	s.draw(f)
	s.wrote = s.wrote || wrote
}

func (s *scrollback) note(text string) {
	s.draw(func(r *termui.Renderer) error { return r.Note(text) })
}

// take returns what is to be printed, without its final newline (the printer
// adds one), and forgets it.
func (s *scrollback) take() string {
	t := strings.TrimSuffix(s.out.String(), "\n")
	s.out.Reset()
	return t
}

// record renders one record. Progress is not printed: the running call's output
// shows live under the input's view and the result card folds it.
func (s *scrollback) record(rec session.Record) {
	if s.pres == nil {
		return
	}
	it := s.pres.Present(rec)
	switch rec.Type {
	case session.TypeUser:
		text, files := splitAttachments(rec.Text)
		s.draw(func(r *termui.Renderer) error {
			if err := r.User(text); err != nil {
				return err
			}
			for _, f := range files {
				if err := r.Note("attached " + f); err != nil {
					return err
				}
			}
			return nil
		})
	case session.TypeAssistant:
		s.draw(func(r *termui.Renderer) error { return r.Assistant(rec.Text) })
	case session.TypeThinking:
		s.draw(func(r *termui.Renderer) error { return r.Thinking(rec.Text) })
	case session.TypeToolCall:
		s.current, s.last = rec.CallID, it.Call
		s.draw(func(r *termui.Renderer) error { return r.Call(it.Call) })
	case session.TypeToolResult:
		if rec.CallID != s.current && it.Call != nil {
			s.current = rec.CallID
			s.draw(func(r *termui.Renderer) error { return r.Note("↳ " + callTitle(it.Call)) })
		}
		var raw []card.Content
		isErr := false
		if rec.Result != nil {
			raw, isErr = rec.Result.Content, rec.Result.IsError
		}
		s.drawAttached(func(r *termui.Renderer) error { return r.Result(it.Result, raw, isErr) })
	case session.TypeTurnEnd:
		if t := turnNote(rec); t != "" {
			s.note(t)
		}
	case session.TypeMode:
		s.note("permission mode: " + rec.Mode)
	case session.TypeDamaged:
		s.note("a damaged log line: " + rec.Error)
	case session.TypeCompaction, session.TypeInstructions:
		// What dsh added to the model's context, where it happened.
		s.current = ""
		s.draw(func(r *termui.Renderer) error {
			if err := r.Call(it.Call); err != nil {
				return err
			}
			return r.Result(it.Result, nil, false)
		})
	case session.TypeModel:
		s.note("model: " + rec.Model)
	case session.TypeHeader, session.TypeProgress, session.TypePlan, session.TypeAllow:
		// The todo_write result card shows the plan; approvals show in the prompt
		// that made them.
	}
}

func (s *scrollback) lastCall() card.Call { return s.last }

// turnNote says how a turn ended when that is news: a turn that simply ended
// says nothing (the status line has the tokens).
func turnNote(rec session.Record) string {
	if rec.StopReason == "end_turn" && rec.Error == "" {
		return ""
	}
	t := "turn ended: " + strings.ReplaceAll(rec.StopReason, "_", " ")
	if rec.Error != "" {
		t += " · " + rec.Error
	}
	return t
}

// callTitle is the one-line name of a call card.
func callTitle(c card.Call) string {
	switch c := c.(type) {
	case *card.GenericCall:
		return c.Title
	case *card.TerminalCall:
		first, _, _ := strings.Cut(c.Title, "\n")
		return "$ " + first
	case *card.DiffCall:
		return c.Title
	}
	return ""
}

// renderCall draws a call card on its own, for the permission prompt.
func renderCall(c card.Call, o termui.Options) string {
	if c == nil {
		return ""
	}
	var b bytes.Buffer
	if err := termui.New(&b, o).Call(c); err != nil {
		return fmt.Sprintf("(the call cannot be shown: %v)\n", err)
	}
	return b.String()
}
