package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/view"
)

// agentRun is one input, as typed, driven to the end of its turn (or its
// command's answer).
type agentRun struct {
	Prompt string
	Color  bool
	Output string // text, json or stream-json
}

// runAgentTurn runs one turn on s, renders the session's stream as it happens
// in the chosen output, and closes s. It returns the turn's stop reason.
func runAgentTurn(ctx context.Context, io IO, s *host.Session, r agentRun) (host.StopReason, error) {
	var spin *spinner
	if io.ErrIsTerminal && r.Output == "text" {
		spin = newSpinner(io.Err)
		io.Out = spin.guard(io.Out)
		defer spin.stop()
	}
	ask := &termAsker{io: io, lines: stdinLines(io.In), spin: spin}
	var handle func(host.Event)
	var result *jsonResult
	switch r.Output {
	case "json":
		result = &jsonResult{SessionID: s.ID()}
		handle = func(e host.Event) {
			switch e.Kind {
			case host.KindRecord:
				result.fold(e.Record)
				if e.Record.SignIn != nil { // the link must reach someone: stdout holds the JSON
					warner(io)(e.Record.Text)
				}
			case host.KindPermission:
				ask.ask(e.Permission)
			case host.KindQuestion:
				ask.question(e.Question)
			case host.KindNotice:
				warner(io)(e.Text)
			case host.KindDelta, host.KindModelRequest, host.KindCallStarted, host.KindUsage, host.KindStatus, host.KindChild:
			}
		}
	case "stream-json":
		js := &jsonConsumer{w: io.Out, pres: view.NewPresenter(s.Registry())}
		_ = js.handle(s.Header()) // logged before anyone could subscribe
		handle = func(e host.Event) {
			switch e.Kind {
			case host.KindPermission:
				d, ok := ask.ask(e.Permission)
				_ = js.event(e, d, ok)
				return
			case host.KindQuestion:
				a, ok := ask.question(e.Question)
				_ = js.question(e.Question, a, ok)
				return
			case host.KindNotice:
				warner(io)(e.Text)
				return
			case host.KindRecord, host.KindDelta, host.KindModelRequest, host.KindCallStarted, host.KindUsage, host.KindStatus, host.KindChild:
			}
			_ = js.event(e, 0, false) // a failing stdout must not stall the turn
		}
	default:
		term := newTermConsumer(io.Out, s.Registry(), termui.Options{Color: r.Color, Width: io.width(), Root: s.Root()},
			func(err error) { warner(io)(err.Error()) })
		handle = func(e host.Event) {
			switch e.Kind {
			case host.KindRecord:
				_ = term.handle(e.Record) // a failing terminal must not stall the turn
				spin.record(e.Record, term)
			case host.KindPermission:
				_ = term.ask(e.Permission)
				ask.ask(e.Permission)
			case host.KindQuestion:
				ask.question(e.Question)
			case host.KindModelRequest:
				spin.set("waiting for the model")
			case host.KindDelta:
				spin.set("the model is writing")
			case host.KindChild:
				if e.Child.Event.Kind == host.KindRecord {
					_ = term.fold.Child(term.ui, e.Child.Call, e.Child.Session, e.Child.Event.Record)
				}
			case host.KindNotice:
				spin.pause()
				warner(io)(e.Text)
			case host.KindCallStarted, host.KindUsage, host.KindStatus:
			}
		}
	}
	sub := s.Subscribe(handle)
	spin.set("waiting for the model")
	a, turnErr := s.Submit(ctx, host.Input{Text: r.Prompt, Where: host.Terminal})
	stop := a.Stop
	switch {
	case !a.Turn && turnErr == nil:
		stop = host.StopEndTurn
		if a.Action != host.ActionNone {
			turnErr = fmt.Errorf("/%s works in the chat only (dsh with no command)", a.Command)
		}
	case errors.Is(turnErr, host.ErrUnknownCommand):
		stop = host.StopError
		turnErr = fmt.Errorf("%w; to send it to the model as written, put a space before the slash", turnErr)
	}
	sub.Flush(drainTimeout)
	spin.stop()
	closeErr := s.Close()
	if result != nil {
		result.StopReason = string(stop)
		result.status(s.Status())
		if turnErr != nil && result.Error == "" {
			result.Error = turnErr.Error()
		}
		b, err := json.Marshal(result, json.Deterministic(true))
		if err == nil {
			_, err = io.Out.Write(append(b, '\n'))
		}
		closeErr = errors.Join(closeErr, err)
	}
	if turnErr != nil {
		return stop, turnErr
	}
	return stop, closeErr
}

// jsonResult is what dsh run --output json prints when the turn ends.
type jsonResult struct {
	SessionID  string         `json:"sessionId"`
	StopReason string         `json:"stopReason"`
	Text       string         `json:"text"`
	Usage      *session.Usage `json:"usage,omitempty"` // the session's, as the host's status says
	CostUSD    *float64       `json:"costUsd,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// status renders the session's status: its tokens, and its cost when every
// call's price is known.
func (j *jsonResult) status(st host.Status) {
	if st.InputTokens+st.OutputTokens == 0 {
		return // a provider that counts nothing tells nothing
	}
	j.Usage = &session.Usage{InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, ContextTokens: st.ContextTokens}
	if !st.Unpriced {
		j.CostUSD = &st.Cost
	}
}

func (j *jsonResult) fold(rec session.Record) {
	switch rec.Type {
	case session.TypeAssistant:
		j.Text = rec.Text
	case session.TypeTurnEnd:
		j.Error = rec.Error
	case session.TypeReply:
		if rec.SignIn == nil { // a sign-in's card is not the command's answer
			j.Text = rec.Text
		}
	case session.TypeHeader, session.TypeUser, session.TypeThinking, session.TypeToolCall, session.TypeProgress,
		session.TypeToolResult, session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeDamaged,
		session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeDecision, session.TypeTitle:
	}
}

// warner prints harness warnings on stderr.
func warner(io IO) func(string) {
	return func(msg string) { fmt.Fprintf(io.Err, "dsh: %s\n", msg) }
}

// stdinLines is the one reader of stdin: answers to every prompt come from it,
// so a prompt that was cancelled leaves no reader behind to eat the next answer.
func stdinLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				ch <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// termAsker answers permission requests on the terminal.
type termAsker struct {
	io    IO
	lines <-chan string
	spin  *spinner
}

// ask asks on the terminal and returns the answer given; ok is false when the
// request stopped waiting first (its turn was cancelled).
func (t *termAsker) ask(p *host.Permission) (d agent.Decision, ok bool) {
	t.spin.pause()
	defer t.spin.resume()
	d, ok = t.decide(p)
	if ok {
		p.Answer(d)
	}
	return d, ok
}

func (t *termAsker) decide(p *host.Permission) (agent.Decision, bool) {
	req := p.Request
	always, why := "", ""
	if ap := req.Approval; ap.Remember && len(ap.Keys) > 0 {
		always = fmt.Sprintf(", [a] always allow %s", ap.Label)
	} else if ap.Label != "" {
		why = " (" + ap.Label + ")" // why it cannot be remembered
	}
	fmt.Fprintf(t.io.Err, "Allow %s?%s [y] once%s, [n] no: ", req.Tool, why, always)
	select {
	case <-p.Done():
		fmt.Fprintln(t.io.Err)
		return agent.Reject, false
	case line, ok := <-t.lines:
		switch a := strings.ToLower(strings.TrimSpace(line)); {
		case !ok:
			fmt.Fprintln(t.io.Err, "(no answer on stdin: rejected; use --mode to decide in advance)")
			return agent.Reject, true
		case a == "y" || a == "yes":
			return agent.AllowOnce, true
		case (a == "a" || a == "always") && always != "":
			return agent.AllowAlways, true
		default:
			return agent.Reject, true
		}
	}
}

// errNoAnswer is a question's failure when stdin has ended: no one is there
// to answer.
var errNoAnswer = errors.New("no user is available: dsh run reads answers from stdin, which has ended")

// question asks a tool's question on the terminal: a number picks a choice,
// other text is the user's own answer (where the question takes one), an
// empty line none. ok is false when no answer was given: stdin ended, or the
// question stopped waiting first.
func (t *termAsker) question(q *host.Question) (card.Answer, bool) {
	t.spin.pause()
	defer t.spin.resume()
	req := q.Request.Question
	for line := range strings.SplitSeq(req.Text, "\n") { // a question of several lines (an MCP server's form) keeps them
		fmt.Fprintln(t.io.Err, termui.Sanitize(line))
	}
	for i, c := range req.Choices {
		line := fmt.Sprintf("  [%d] %s", i+1, c.Label)
		if c.Description != "" {
			line += " — " + c.Description
		}
		fmt.Fprintln(t.io.Err, termui.Sanitize(line))
	}
	how := "a number"
	if req.FreeText {
		how += ", or your own answer"
	}
	fmt.Fprintf(t.io.Err, "Answer with %s (empty: none): ", how)
	select {
	case <-q.Done():
		fmt.Fprintln(t.io.Err)
		return card.Answer{}, false
	case line, ok := <-t.lines:
		if !ok {
			fmt.Fprintln(t.io.Err, "(no answer on stdin: the model is told no one can answer)")
			q.Unanswered(errNoAnswer)
			return card.Answer{}, false
		}
		a := pick(req.Choices, req.FreeText, strings.TrimSpace(line))
		q.Answer(a)
		return a, true
	}
}

// pick is the answer a line gives.
func pick(cs []card.Choice, free bool, line string) card.Answer {
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(cs) {
		return card.Answer{ID: cs[n-1].ID, Text: cs[n-1].Label}
	}
	if free && line != "" {
		return card.Answer{Text: line}
	}
	return card.Answer{}
}

// drainTimeout bounds how long a command waits for its output to catch up.
const drainTimeout = 5 * time.Second
