package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/view"
)

// termConsumer renders a session's records on the terminal. Live runs and
// `dsh replay` use it alike, which is what keeps them the same.
type termConsumer struct {
	ui   *termui.Renderer
	pres *view.Presenter
	// current is the call whose card is the last thing on screen. When output or
	// a result of another call arrives (the model asked for several calls at
	// once), a one-line header says which call it belongs to.
	current string
}

func newTermConsumer(w io.Writer, reg *tool.Registry, o termui.Options) *termConsumer {
	return &termConsumer{ui: termui.New(w, o), pres: view.NewPresenter(reg)}
}

// follow prints which call what comes next belongs to, unless it is obvious.
func (t *termConsumer) follow(callID string, c card.Call) error {
	if callID == t.current || c == nil {
		return nil
	}
	t.current = callID
	return t.ui.Note("↳ " + callTitle(c))
}

// callTitle is the one-line name of a call card.
func callTitle(c card.Call) string {
	switch c := c.(type) {
	case *card.GenericCall:
		return c.Title
	case *card.TerminalCall:
		return "$ " + oneLine(c.Title, 80)
	case *card.DiffCall:
		return c.Title
	}
	return ""
}

func (t *termConsumer) handle(rec session.Record) error {
	it := t.pres.Present(rec)
	switch rec.Type {
	case session.TypeHeader:
		return nil
	case session.TypeUser:
		return t.ui.User(rec.Text)
	case session.TypeAssistant:
		return t.ui.Assistant(rec.Text)
	case session.TypeThinking:
		return t.ui.Thinking(rec.Text)
	case session.TypeToolCall:
		t.current = rec.CallID
		return t.ui.Call(it.Call)
	case session.TypeProgress:
		if err := t.follow(rec.CallID, it.Call); err != nil {
			return err
		}
		return t.ui.Progress(rec.Chunk)
	case session.TypeToolResult:
		if err := t.follow(rec.CallID, it.Call); err != nil {
			return err
		}
		return t.ui.Result(it.Result, rec.Result.Content, rec.Result.IsError)
	case session.TypePlan:
		// The todo_write result card already shows the list; plans matter to
		// consumers with a plan view (ACP, web).
		return nil
	case session.TypeTurnEnd:
		return t.ui.Note(turnSummary(rec))
	case session.TypeMode:
		return t.ui.Note("permission mode: " + rec.Mode)
	case session.TypeDamaged:
		return t.ui.Note("a damaged log line: " + rec.Error)
	case session.TypeCompaction, session.TypeInstructions:
		// What dsh added to the model's context, shown where it happened.
		t.current = ""
		if err := t.ui.Call(it.Call); err != nil {
			return err
		}
		return t.ui.Result(it.Result, nil, false)
	case session.TypeAllow, session.TypeModel:
	}
	return nil
}

func turnSummary(rec session.Record) string {
	var b strings.Builder
	b.WriteString("turn ended: ")
	b.WriteString(strings.ReplaceAll(rec.StopReason, "_", " "))
	if rec.Usage != nil && rec.Usage.InputTokens+rec.Usage.OutputTokens > 0 {
		fmt.Fprintf(&b, " · %d tokens in, %d out", rec.Usage.InputTokens, rec.Usage.OutputTokens)
	}
	if rec.Error != "" {
		b.WriteString(" · ")
		b.WriteString(rec.Error)
	}
	return b.String()
}

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
