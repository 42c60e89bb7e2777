package host

import (
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/telemetry"
)

// telemetryWait bounds how long closing a session waits for the collector to
// take its last spans: a collector that is down never holds up dsh's exit.
const telemetryWait = 2 * time.Second

// exporting is a session's OpenTelemetry export (Options.Telemetry): a
// subscriber like any consumer, so chat, dsh run and dsh acp export the same
// spans, folded from the same stream.
type exporting struct {
	mu  sync.Mutex // the subscriber's handler, or Close once it is stuck
	exp *telemetry.Exporter
	tr  *telemetry.Trace
}

// startTelemetry starts the export the options ask for. Without it nothing of
// the SDK runs. A subagent's session exports through its parent's stream.
func (s *Session) startTelemetry() {
	if s.o.Telemetry == nil || s.o.sub != nil {
		return
	}
	exp, err := telemetry.Start(*s.o.Telemetry, s.o.Version, s.o.Warn)
	if err != nil {
		s.o.Warn("telemetry: " + err.Error())
		return
	}
	x := &exporting{exp: exp, tr: exp.Session(s.ID())}
	s.bus.subscribe(func(e Event) {
		x.mu.Lock()
		defer x.mu.Unlock()
		s.export(x.tr, e, false)
	})
	s.otel = x
}

// stopTelemetry ends the spans still open and sends what is left, within
// telemetryWait. After Kill nothing is sent: that exit is at once.
func (s *Session) stopTelemetry(now bool) {
	x := s.otel
	if x == nil || now {
		return
	}
	x.mu.Lock()
	x.tr.End(s.o.Now())
	x.mu.Unlock()
	x.exp.Close(telemetryWait)
}

// export folds one event into tr; child says tr is a subagent's, whose model
// calls are known only from its turn's end. Every span is timed as its
// events are handled, records included (not by their logged time): the
// moments the stream does not log have no other time, and one clock keeps
// the spans in the order of the stream.
func (s *Session) export(tr *telemetry.Trace, e Event, child bool) {
	at := s.o.Now()
	switch e.Kind {
	case KindRecord:
		r := e.Record
		switch r.Type {
		case session.TypeUser:
			tr.Prompt(at, r.Text, len(r.Content))
		case session.TypeAssistant:
			tr.Assistant(at, r.Text)
		case session.TypeToolCall:
			tr.Call(at, r.CallID, r.Name, r.Args)
		case session.TypeToolResult:
			if r.Result != nil {
				tr.Result(at, r.CallID, r.Result.IsError, r.Result.TextOf())
			}
		case session.TypeTurnEnd:
			var used telemetry.ModelCall
			if r.Usage != nil {
				used.Priced = len(r.Usage.Calls) > 0
				for _, c := range r.Usage.Calls {
					m := priced(c)
					if child {
						tr.ModelDone(at, m)
					}
					used.Cost += m.Cost
					used.Priced = used.Priced && m.Priced
				}
				used.InputTokens, used.OutputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
			}
			tr.TurnEnd(at, r.StopReason, r.Error, used)
		case session.TypeHeader, session.TypeThinking, session.TypeProgress, session.TypePlan, session.TypeMode,
			session.TypeAllow, session.TypeCompaction, session.TypeInstructions, session.TypeModel, session.TypeCheckpoint,
			session.TypeRestore, session.TypeHook, session.TypeCommand, session.TypeReply, session.TypeDamaged,
			session.TypeDecision, session.TypeTitle:
		}
	case KindModelRequest:
		tr.ModelRequest(at)
	case KindUsage:
		var c session.CallUsage
		if len(e.Usage.Calls) > 0 {
			c = e.Usage.Calls[0]
		} else { // a compaction's call: the model in force
			c = session.CallUsage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens}
			c.Model, _ = s.Model()
		}
		tr.ModelDone(at, priced(c))
	case KindPermission:
		p := e.Permission
		if p.Child != "" {
			tr = tr.Child(p.Parent, p.Child, "")
		}
		tr.Asked(at, p.Request.CallID)
	case KindCallStarted:
		tr.Started(at, e.CallID)
	case KindChild:
		c := e.Child
		s.export(tr.Child(c.Call, c.Session, c.Agent), c.Event, true)
	case KindDelta, KindStatus, KindQuestion, KindNotice:
	}
}

// priced is a model call with its cost, as /cost prices it.
func priced(c session.CallUsage) telemetry.ModelCall {
	cost, ok := models.Cost(c.Model, models.Usage{InputTokens: c.InputTokens, OutputTokens: c.OutputTokens})
	return telemetry.ModelCall{Model: c.Model, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, Cost: cost, Priced: ok}
}
