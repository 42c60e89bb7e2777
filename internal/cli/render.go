package cli

import (
	"io"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termfold"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// termConsumer renders a session's records on the terminal through the one
// terminal fold, which the chat shares. Live runs and `dsh replay` use it
// alike, which is what keeps them the same.
type termConsumer struct {
	ui   *termui.Renderer
	fold *termfold.Fold
}

func newTermConsumer(w io.Writer, reg *tool.Registry, o termui.Options, onError func(error)) *termConsumer {
	return &termConsumer{ui: termui.New(w, o), fold: termfold.New(reg, onError)}
}

func (t *termConsumer) handle(rec session.Record) error { return t.fold.Record(t.ui, rec) }

// ask draws, before the question, what the user is asked about: the change a
// logged call proposes under its line, the whole card of a request no record
// has shown (an undo's diff).
func (t *termConsumer) ask(p *host.Permission) error {
	if p.Unlogged {
		return t.ui.Approval(p.Request.Card)
	}
	if _, ok := p.Request.Card.(*card.DiffCall); !ok || p.Parent != "" {
		return nil
	}
	if t.fold.Shown == nil {
		t.fold.Shown = map[string]bool{}
	}
	t.fold.Shown[p.Request.CallID] = true
	return t.ui.Proposed(p.Request.Card)
}

// jsonItem is one line of `dsh replay --json` (and of `dsh run --output
// stream-json`) for a record: the record as the log holds it, plus the cards
// the presenters make of it — a tool call's card (call), a result's card
// (card, absent when the result has no rich view), and the two cards of what
// dsh added to the model's context (a compaction, nested instructions). A
// tool_result's name is the tool of the call it answers.
type jsonItem struct {
	session.Record `json:",inline"`
	Call           card.Call   `json:"call,omitempty"`
	Card           card.Result `json:"card,omitempty"`
}

// jsonConsumer writes each record as a jsonItem line.
type jsonConsumer struct {
	w        io.Writer
	pres     *view.Presenter
	children map[string]*jsonConsumer // subagents' sessions
}

func (j *jsonConsumer) handle(rec session.Record) error {
	b, err := json.Marshal(j.item(rec), json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

// child is the consumer of a subagent's records, by its session.
func (j *jsonConsumer) child(id string) *jsonConsumer {
	if c, ok := j.children[id]; ok {
		return c
	}
	if j.children == nil {
		j.children = map[string]*jsonConsumer{}
	}
	c := &jsonConsumer{w: j.w, pres: j.pres.Nested()}
	j.children[id] = c
	return c
}

func (j *jsonConsumer) item(rec session.Record) *jsonItem {
	it := j.pres.Present(rec)
	out := jsonItem{Record: rec}
	switch rec.Type {
	case session.TypeToolCall:
		out.Call = it.Call
	case session.TypeToolResult:
		out.Card = it.Result
		if rec.Name == "" {
			out.Name = it.Name
		}
	case session.TypeCompaction, session.TypeInstructions, session.TypeRestore, session.TypeHook, session.TypeReply:
		out.Call, out.Card = it.Call, it.Result // none for a reply without a diff
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
		session.TypeProgress, session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeDamaged, session.TypeCheckpoint,
		session.TypeCommand, session.TypeDecision, session.TypeTitle:
	}
	return &out
}
