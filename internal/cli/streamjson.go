package cli

import (
	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// streamEvent is a line of dsh run --output stream-json for a moment the log
// does not keep; records are written as jsonItem lines, like dsh replay --json.
type streamEvent struct {
	Type     string         `json:"type"`
	Delta    *streamDelta   `json:"delta,omitempty"`
	CallID   string         `json:"callId,omitempty"`
	Tool     string         `json:"tool,omitempty"`
	Decision string         `json:"decision,omitempty"`
	Answer   *card.Answer   `json:"answer,omitempty"`
	Usage    *session.Usage `json:"usage,omitempty"`
	// A subagent's record: its session, nested under the task call CallID.
	Session string    `json:"session,omitempty"`
	Record  *jsonItem `json:"record,omitempty"`
}

type streamDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// event writes one line for e; a permission carries the decision made, if any.
func (j *jsonConsumer) event(e host.Event, d agent.Decision, decided bool) error {
	var out streamEvent
	switch e.Kind {
	case host.KindRecord:
		return j.handle(e.Record)
	case host.KindDelta:
		out = streamEvent{Type: "delta", Delta: &streamDelta{Type: string(e.Delta.Type), Text: e.Delta.Text}}
	case host.KindModelRequest:
		out = streamEvent{Type: "model_request"}
	case host.KindCallStarted:
		out = streamEvent{Type: "call_started", CallID: e.CallID}
	case host.KindPermission:
		req := e.Permission.Request
		out = streamEvent{Type: "permission", CallID: req.CallID, Tool: req.Tool, Decision: "none"}
		if decided {
			out.Decision = decisionName(d)
		}
	case host.KindUsage:
		u := e.Usage
		out = streamEvent{Type: "usage", Usage: &u}
	case host.KindStatus:
		return nil // the usage events and the records say it
	case host.KindQuestion:
		return nil // written by question, with its answer
	case host.KindNotice:
		return nil // told on stderr
	case host.KindChild:
		c := e.Child
		if c.Event.Kind != host.KindRecord {
			return nil
		}
		out = streamEvent{Type: "child", CallID: c.Call, Session: c.Session, Record: j.child(c.Session).item(c.Event.Record)}
	}
	b, err := json.Marshal(out, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

// question writes the line of a question, with the answer given, if any.
func (j *jsonConsumer) question(q *host.Question, a card.Answer, answered bool) error {
	out := streamEvent{Type: "question", CallID: q.Request.CallID, Tool: q.Request.Tool}
	if answered {
		out.Answer = &a
	}
	b, err := json.Marshal(out, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

func decisionName(d agent.Decision) string {
	switch d {
	case agent.AllowOnce:
		return "allow_once"
	case agent.AllowAlways:
		return "allow_always"
	case agent.Reject:
		return "reject"
	}
	return "unknown"
}
