package control

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		line, err string // err: a part of the error, "" for none
	}{
		{`{"id":"1","op":"submit","input":{"text":"hi"},"from":"web"}`, ""},
		{`{"id":"1","op":"submit"}`, "needs an input"},
		{`{"id":"1","op":"permission","waiting":"w1","decision":"always"}`, ""},
		{`{"id":"1","op":"permission","waiting":"w1","decision":"maybe"}`, "decision"},
		{`{"id":"1","op":"permission","decision":"allow"}`, "decision"},
		{`{"id":"1","op":"question","waiting":"w2","answer":{"id":"a"}}`, ""},
		{`{"id":"1","op":"question","waiting":"w2"}`, "answer"},
		{`{"id":"1","op":"cancel"}`, ""},
		{`{"id":"1","op":"mode","mode":"plan"}`, ""},
		{`{"id":"1","op":"mode","mode":"yolo"}`, "unknown permission mode"},
		{`{"id":"1","op":"model","model":"m","thinking":"low"}`, ""},
		{`{"id":"1","op":"model"}`, "needs a model"},
		{`{"id":"1","op":"rename","title":"Fix the parser"}`, ""},
		{`{"id":"1","op":"rename","title":"   "}`, "empty"},
		{`{"id":"1","op":"rename","title":"a\u001b[2Jb"}`, "one line"},
		{`{"id":"1","op":"rename","title":"` + strings.Repeat("x", MaxTitle+1) + `"}`, "at most"},
		{`{"id":"1","op":"points"}`, ""},
		{`{"id":"1","op":"models"}`, ""},
		{`{"id":"1","op":"shell"}`, "unknown request"},
		{`{"op":"cancel"}`, "needs an id"},
		{`{"id":"` + strings.Repeat("i", 65) + `","op":"cancel"}`, "needs an id"},
		{`{"id":"1","op":"cancel","from":"a b"}`, "short name"},
		{`{"id":"1","op":"cancel","from":"` + strings.Repeat("f", 33) + `"}`, "short name"},
		{`{"id":"1","op":"cancel","x":1}`, "not a request"},
		{`{"id":1,"op":"cancel"}`, "not a request"},
		{`[]`, "not a request"},
		{``, "not a request"},
	} {
		_, err := DecodeRequest([]byte(tc.line))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%.60s: %v", tc.line, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%.60s: error %v, want one saying %q", tc.line, err, tc.err)
		}
	}
}

// FuzzDecodeRequest: any line is a request or an error, never a panic; a
// request it accepts is one the server can carry out and encodes back to
// the same request.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","op":"submit","input":{"text":"hi","content":[{"type":"text","text":"x"}],"where":1}}`,
		`{"id":"1","op":"permission","waiting":"w1","decision":"allow","from":"web"}`,
		`{"id":"1","op":"question","waiting":"w1","answer":{"text":"yes"}}`,
		`{"id":"1","op":"rename","title":"t"}`,
		`{"id":"1","op":"mode","mode":"default"}`,
		`{"id":"1","op":"cancel"}`,
		`not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeRequest(line)
		if err != nil {
			return
		}
		if r.ID == "" || len(r.ID) > maxID || !validOp(r.Op) || !validFrom(r.From) {
			t.Fatalf("accepted %q as %+v", line, r)
		}
		if (r.Op == OpSubmit) != (r.Op == OpSubmit && r.Input != nil) {
			t.Fatalf("a submit without input: %q", line)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeRequest(b)
		if err != nil {
			t.Fatalf("%s does not decode again: %v", b, err)
		}
		if b2, _ := json.Marshal(back); string(b2) != string(b) {
			t.Fatalf("not stable: %s, then %s", b, b2)
		}
	})
}

// TestEventsRoundTrip: each kind of host event goes over the wire and comes
// back as the same event; a permission and a question come back answerable.
func TestEventsRoundTrip(t *testing.T) {
	call := &card.GenericCall{Title: "touch x"}
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	perm := &host.Permission{Request: host.PermissionRequest{CallID: "c1", Tool: "bash", Args: []byte(`{"command":"touch x"}`), Card: call,
		Permission: tool.PermExecute, Approval: tool.Approval{Label: "touch", Keys: []string{"touch"}, Remember: true}}, Parent: "t1", Child: "kid"}
	q := host.NewQuestion(host.QuestionRequest{CallID: "c2", Tool: "ask_user", Card: call,
		Question: tool.Question{Text: "Which?", Choices: []card.Choice{{ID: "a", Label: "A"}}, FreeText: true}})
	for _, tc := range []struct {
		name string
		e    host.Event
	}{
		{"record", host.Event{Kind: host.KindRecord, Record: session.Record{Type: session.TypeDecision, Time: now, CallID: "c1", Decision: "allow", From: "web"}}},
		{"invalid UTF-8 in a record", host.Event{Kind: host.KindRecord, Record: session.Record{Type: session.TypeProgress, Time: now, CallID: "c1", Chunk: "a\xffb"}}},
		{"delta", host.Event{Kind: host.KindDelta, Delta: provider.Delta{Type: provider.DeltaType("text"), Text: "he"}}},
		{"model request", host.Event{Kind: host.KindModelRequest}},
		{"call started", host.Event{Kind: host.KindCallStarted, CallID: "c1"}},
		{"usage", host.Event{Kind: host.KindUsage, Usage: session.Usage{InputTokens: 3, OutputTokens: 4}}},
		{"status", host.Event{Kind: host.KindStatus, Status: host.Status{Model: "m", Mode: host.ModePlan, State: host.StateWaiting, Cost: 0.5}}},
		{"notice", host.Event{Kind: host.KindNotice, Text: "not attached: x"}},
		{"child", host.Event{Kind: host.KindChild, Child: &host.Child{Call: "t1", Session: "kid", Agent: "explore",
			Event: host.Event{Kind: host.KindCallStarted, CallID: "k1"}}}},
		{"permission", host.Event{Kind: host.KindPermission, Permission: perm}},
		{"question", host.Event{Kind: host.KindQuestion, Question: q}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := wireEvent(tc.e, "w7")
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(Message{Type: MsgEvent, Event: w}, recordOpts)
			if err != nil {
				t.Fatal(err)
			}
			var m Message
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			var sent []Request
			c := &Client{waiting: map[string]func(){}, answers: map[string]bool{}}
			back, err := hostEvent(m.Event, func(e *Event) (host.Event, error) {
				// As the client makes them, with answers caught here.
				return c.pendingWith(e, func(r Request) { sent = append(sent, r) })
			})
			if err != nil {
				t.Fatal(err)
			}
			if back.Kind != tc.e.Kind {
				t.Fatalf("kind %d, want %d", back.Kind, tc.e.Kind)
			}
			switch tc.e.Kind {
			case host.KindPermission:
				p := back.Permission
				if p.Request.CallID != "c1" || p.Request.Approval.Label != "touch" || p.Parent != "t1" || p.Child != "kid" ||
					string(p.Request.Args) != `{"command":"touch x"}` || p.Request.Card.(*card.GenericCall).Title != "touch x" {
					t.Errorf("permission came back as %+v", p)
				}
				p.Answer(host.AllowAlways)
				if len(sent) != 1 || sent[0].Waiting != "w7" || sent[0].Decision != DecisionAlways {
					t.Errorf("answer sent as %+v", sent)
				}
			case host.KindQuestion:
				bq := back.Question
				if bq.Request.Question.Text != "Which?" || len(bq.Request.Question.Choices) != 1 {
					t.Errorf("question came back as %+v", bq.Request)
				}
				bq.Answer(card.Answer{ID: "a"})
				if len(sent) != 1 || sent[0].Waiting != "w7" || sent[0].Answer.ID != "a" {
					t.Errorf("answer sent as %+v", sent)
				}
			case host.KindRecord, host.KindDelta, host.KindModelRequest, host.KindCallStarted, host.KindUsage,
				host.KindStatus, host.KindChild, host.KindNotice:
				want, _ := json.Marshal(w, recordOpts)
				again, err := wireEvent(back, "w7")
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(again, recordOpts)
				if string(got) != string(want) {
					t.Errorf("came back as %s, want %s", got, want)
				}
			}
		})
	}
}
