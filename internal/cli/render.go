package cli

import (
	"io"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
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

// jsonItem is one line of `dsh replay --json`: the record's own fields plus the
// cards the presenters make of it.
type jsonItem struct {
	Type       session.RecordType `json:"type"`
	Time       string             `json:"time"`
	SessionID  string             `json:"sessionId,omitempty"`
	Cwd        string             `json:"cwd,omitempty"`
	Text       string             `json:"text,omitempty"`
	CallID     string             `json:"callId,omitempty"`
	Name       string             `json:"name,omitempty"`
	Chunk      string             `json:"chunk,omitempty"`
	Call       card.Call          `json:"call,omitempty"`
	Result     *tool.Result       `json:"result,omitempty"`
	Card       card.Result        `json:"card,omitempty"`
	Plan       []tool.PlanEntry   `json:"plan,omitempty"`
	StopReason string             `json:"stopReason,omitempty"`
	Usage      *session.Usage     `json:"usage,omitempty"`
	Error      string             `json:"error,omitempty"`
	Mode       string             `json:"mode,omitempty"`
	Keys       []string           `json:"keys,omitempty"`
}

// jsonConsumer writes each record as a jsonItem line.
type jsonConsumer struct {
	w    io.Writer
	pres *view.Presenter
}

func (j *jsonConsumer) handle(rec session.Record) error {
	it := j.pres.Present(rec)
	out := jsonItem{
		Type: rec.Type, Time: rec.Time.UTC().Format("2006-01-02T15:04:05.000000000Z07:00"),
		SessionID: rec.SessionID, Cwd: rec.Cwd, Text: rec.Text, CallID: rec.CallID, Name: rec.Name,
		Chunk: rec.Chunk, Result: rec.Result, Plan: rec.Plan, StopReason: rec.StopReason,
		Usage: rec.Usage, Error: rec.Error, Mode: rec.Mode, Keys: rec.Keys,
	}
	switch rec.Type {
	case session.TypeToolCall:
		out.Call = it.Call
	case session.TypeToolResult:
		out.Card = it.Result
		if rec.Name == "" {
			out.Name = it.Name
		}
	case session.TypeHeader, session.TypeUser, session.TypeAssistant, session.TypeThinking,
		session.TypeProgress, session.TypePlan, session.TypeTurnEnd, session.TypeMode, session.TypeAllow, session.TypeModel, session.TypeDamaged, session.TypeCompaction, session.TypeInstructions:
	}
	b, err := json.Marshal(out, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}
