// Package view turns a session's record stream into what consumers show: messages
// and cards. It is the one place where records meet presenters, so the terminal,
// the web page and the ACP bridge — live or on replay — all see the same cards.
package view

import (
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/diffview"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Item is one record with its cards. Call is set for tool_call records; for
// tool_result records Call is the card of the call it answers and Result is the
// result card (nil: show Record.Result.Content raw). Err says that a presenter
// failed on this record: the cards are then the generic fallback.
type Item struct {
	Record session.Record
	Name   string // the tool of the call a tool_call, progress or tool_result record is about
	Call   card.Call
	Result card.Result
	Err    error
}

// Presenter remembers each open call's name, arguments and card so that its progress and
// result, which arrive later in the stream, are presented from the same data
// (and the call card is made once). A call is forgotten at its result, so a
// long session costs only its open calls.
type Presenter struct {
	reg   *tool.Registry
	calls map[string]seenCall
	// OnError, if set, is told when a presenter fails (it panicked: a bug that
	// must not end the consumer, but that someone should see).
	OnError func(error)
}

// seenCall is what a call's result needs of it: not its whole record, which a
// replay would copy into the map and out again for every call.
type seenCall struct {
	name string
	args []byte
	card card.Call
}

// NewPresenter returns a presenter for a session's records.
func NewPresenter(reg *tool.Registry) *Presenter {
	return &Presenter{reg: reg, calls: map[string]seenCall{}}
}

// Nested is a presenter for the records of a child session (a subagent's):
// the same tools, its own open calls, the same error report.
func (p *Presenter) Nested() *Presenter {
	n := NewPresenter(p.reg)
	n.OnError = p.OnError
	return n
}

// Present returns the item for r. It is a pure function of the records seen so
// far. A presenter that panics is contained here, for every consumer: the call
// shows as a generic card with its raw input and the result raw.
func (p *Presenter) Present(r session.Record) (it Item) {
	it = Item{Record: r}
	switch r.Type {
	case session.TypeToolCall:
		it.Call, it.Err = p.call(r)
		it.Name = r.Name
		p.calls[r.CallID] = seenCall{name: r.Name, args: r.Args, card: it.Call}
	case session.TypeToolResult:
		c, ok := p.calls[r.CallID]
		if !ok {
			return it
		}
		delete(p.calls, r.CallID)
		it.Call, it.Name = c.card, c.name
		if r.Result != nil {
			it.Result, it.Err = p.result(c.name, r.CallID, c.args, *r.Result)
		}
	case session.TypeProgress:
		c := p.calls[r.CallID]
		it.Call, it.Name = c.card, c.name
	case session.TypeCompaction, session.TypeInstructions:
		it.Name, it.Call, it.Result = noteCards(r)
	case session.TypeRestore:
		it.Name = "undo"
		if r.Restore != nil {
			it.Call, it.Result = RestoreCards(*r.Restore, true)
		}
	case session.TypeReply:
		switch {
		case len(r.Diff) > 0: // /diff: the change it shows, as hunks
			it.Name = "diff"
			it.Call, it.Result = DiffCards(r.Text, r.Diff)
		case r.SignIn != nil:
			it.Name = "sign-in"
			it.Call, it.Result = SignInCards(*r.SignIn)
		}
	case session.TypeHook:
		it.Name = "hook"
		if r.Hook != nil {
			it.Call, it.Result = HookCards(*r.Hook)
		}
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
		session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeDamaged, session.TypeCheckpoint,
		session.TypeCommand, session.TypeDecision, session.TypeTitle:
	}
	if it.Err != nil && p.OnError != nil {
		p.OnError(it.Err)
	}
	return it
}

// hunkContext is how many unchanged lines a restore's hunk shows around a
// change, as an edit's result does.
const hunkContext = 3

// RestoreCards present an undo or rewind: the diff it applies (done false: the
// one it asks to apply) as a diff call and result, titled with what it undoes
// and the files it keeps because the user changed them.
func RestoreCards(r session.Restore, done bool) (*card.DiffCall, *card.DiffResult) {
	what := fmt.Sprintf("change %d", r.To)
	if r.Prompt > 0 {
		what = fmt.Sprintf("prompt %d", r.Prompt)
	}
	verb := "Undo " + what
	if done {
		verb = "Undid " + what
	}
	title := fmt.Sprintf("%s: %d %s", verb, len(r.Files), plural(len(r.Files), "file", "files"))
	if len(r.Kept) > 0 {
		title += fmt.Sprintf("; kept %s (changed since by you)", strings.Join(r.Kept, ", "))
	}
	if r.Fork != "" {
		title += "; the conversation goes on in session " + r.Fork
	}
	return DiffCards(title, r.Files)
}

// DiffCards present files' changes titled title — a restore's, or what /diff
// shows — as a diff call and result of the hunks that change, with context.
func DiffCards(title string, files []session.RestoredFile) (*card.DiffCall, *card.DiffResult) {
	diffs := make([]card.FileDiff, 0, len(files))
	locs := make([]card.Location, 0, len(files))
	for _, f := range files {
		d := card.FileDiff{Path: f.Path, OldText: f.OldText}
		if f.NewText != nil {
			d.NewText = *f.NewText
		}
		diffs = append(diffs, diffview.Hunks(d, hunkContext)...)
		locs = append(locs, card.Location{Path: f.Path})
	}
	return &card.DiffCall{Title: title, Diffs: diffs, Locations: locs},
		&card.DiffResult{Title: title, Diffs: diffs, Locations: locs}
}

// HookCards present a hook's run as a small generic call and result: the event,
// the tool it ran for and the command in the call's title; what it decided, its
// error and its output in the result, which has no title of its own.
func HookCards(h session.Hook) (*card.GenericCall, *card.GenericResult) {
	title := h.Event + " hook"
	if h.Tool != "" {
		title += " (" + h.Tool + ")"
	}
	cmd, _, more := strings.Cut(h.Command, "\n")
	if more || len(cmd) > maxHookTitle {
		cmd = strings.ToValidUTF8(cmd[:min(len(cmd), maxHookTitle)], "") + "…"
	}
	title += ": " + cmd
	var lines []string
	switch {
	case h.Error != "":
		lines = append(lines, "Failed: "+h.Error)
	case h.ExitCode != 0:
		lines = append(lines, fmt.Sprintf("Exit code %d", h.ExitCode))
	}
	if d := hookDecision(h.Event, h.Decision); d != "" {
		if h.Reason != "" {
			d += ": " + h.Reason
		}
		lines = append(lines, d)
	}
	// A reason is most often the hook's stderr: it is not shown twice.
	if out := strings.TrimRight(h.Output, "\n"); out != "" && out != h.Reason {
		lines = append(lines, out)
	}
	res := &card.GenericResult{}
	if len(lines) > 0 {
		res.Content = []card.Content{card.Text(strings.Join(lines, "\n"))}
	}
	return &card.GenericCall{Title: title, ToolKind: card.ToolOther}, res
}

// maxHookTitle keeps a long inline command from filling the card's title.
const maxHookTitle = 80

func hookDecision(event, d string) string {
	if d == "block" {
		switch event {
		case "UserPromptSubmit":
			return "Blocked the prompt"
		case "Stop":
			return "Kept the turn going"
		case "SubagentStop":
			return "Kept the task going"
		case "PostToolUse":
			return "Told the model"
		}
	}
	switch d {
	case "allow":
		return "Allowed the call"
	case "deny":
		return "Denied the call"
	case "ask":
		return "Asked the user"
	case "block":
		return "Blocked"
	case "stop":
		return "Stopped the turn"
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (p *Presenter) call(r session.Record) (card.Call, error) { return CallCard(p.reg, r) }

// CallCard presents a tool_call record with reg, containing a presenter that
// panics as Present does: every card of a call — the permission request's too —
// goes through it.
func CallCard(reg *tool.Registry, r session.Record) (c card.Call, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("presenting the %s call %s: %v", r.Name, r.CallID, v)
			c = &card.GenericCall{Title: r.Name, ToolKind: card.ToolOther, RawInput: raw(r.Args)}
		}
	}()
	return reg.PresentCall(r.Name, r.Args, r.Preview), nil
}

func (p *Presenter) result(name, id string, args []byte, res tool.Result) (c card.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("presenting the %s result %s: %v", name, id, v)
			c = nil
		}
	}()
	if c := tool.RefusedCard(res); c != nil { // the harness's words, for the user
		return c, nil
	}
	return p.reg.PresentResult(name, args, res), nil
}

func raw(args []byte) card.RawJSON {
	if len(args) == 0 {
		return nil
	}
	return card.RawJSON(append([]byte(nil), args...))
}

// noteCards present the records the harness adds to the model context: a
// compaction (its summary) and nested project instructions (the file), each as
// a generic call and result, so consumers show them as they show any call.
func noteCards(r session.Record) (string, card.Call, card.Result) {
	if r.Type == session.TypeInstructions {
		title := "Project instructions: " + r.Path
		return "instructions", &card.GenericCall{Title: title, ToolKind: card.ToolRead, Locations: []card.Location{{Path: r.Path}}},
			&card.GenericResult{Title: title, Content: []card.Content{card.Text(r.Text)}}
	}
	title := "Compacted the conversation"
	if r.Focus != "" {
		title += " (focus: " + r.Focus + ")"
	}
	return "compact", &card.GenericCall{Title: title, ToolKind: card.ToolThink},
		&card.GenericResult{Title: title, Content: []card.Content{card.Text(r.Text)}}
}
