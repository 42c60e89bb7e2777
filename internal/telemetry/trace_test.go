package telemetry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/telemetry"
	"github.com/dsh-dev/dsh/internal/telemetry/otlptest"
)

func start(t *testing.T, r *otlptest.Receiver, protocol string, content, gzip bool) *telemetry.Exporter {
	t.Helper()
	e, err := telemetry.Start(telemetry.Config{Protocol: protocol, Endpoint: r.URL, Service: "dsh-test", Content: content, Gzip: gzip,
		Timeout: time.Minute, Headers: map[string]string{"Authorization": "Bearer t0k"}}, "v9", func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// byName indexes spans by name, and by name@session for a session other
// than S1; a name seen twice fails the test.
func byName(t *testing.T, spans []otlptest.Span) map[string]otlptest.Span {
	t.Helper()
	m := map[string]otlptest.Span{}
	for _, s := range spans {
		key := s.Name
		if id := s.Attrs["gen_ai.conversation.id"]; id != "S1" {
			key += "@" + id.(string)
		}
		if _, dup := m[key]; dup {
			t.Errorf("two spans named %q", key)
		}
		m[key] = s
	}
	return m
}

// A turn with a model call and three tool calls — one run unasked, one asked
// and allowed, one refused — reaches the collector as a turn span with a
// chat span and three execute_tool spans under it, each with its decision;
// a subagent's turn nests under its task call. Without DSH_OTEL_CONTENT no
// text is sent, only sizes; with it, the text is (capped).
func TestTraceSpans(t *testing.T) {
	for _, tt := range []struct {
		name, protocol string
		content        bool
	}{
		{"names and sizes, protobuf", telemetry.ProtocolHTTPProtobuf, false},
		{"with content, protobuf, gzip", telemetry.ProtocolHTTPProtobuf, true},
		{"with content, JSON, gzip", telemetry.ProtocolHTTPJSON, true},
		{"names and sizes, JSON", telemetry.ProtocolHTTPJSON, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			content := tt.content
			r := otlptest.New(t)
			e := start(t, r, tt.protocol, content, content)
			tr := e.Session("S1")
			t0 := time.Unix(1_700_000_000, 0)
			at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
			tr.Prompt(at(0), "fix the secret bug", 1)
			tr.ModelRequest(at(1))
			tr.ModelDone(at(50), telemetry.ModelCall{Model: "claude-sonnet-4-5", InputTokens: 1000, OutputTokens: 20, Cost: 0.0033, Priced: true})
			tr.Assistant(at(51), "I will look")
			tr.Call(at(52), "c1", "read", []byte(`{"path":"secret.txt"}`))
			tr.Started(at(53), "c1")
			tr.Result(at(60), "c1", false, "the secret is 42")
			tr.Call(at(61), "c2", "bash", []byte(`{"command":"make"}`))
			tr.Asked(at(62), "c2")
			tr.Started(at(70), "c2")
			tr.Result(at(90), "c2", true, "make: failed")
			tr.Call(at(91), "c3", "write", []byte(`{"path":"x"}`))
			tr.Asked(at(92), "c3")
			tr.Result(at(93), "c3", true, "Not run: you said no.")
			tr.Call(at(94), "t1", "task", []byte(`{}`))
			kid := tr.Child("t1", "S2", "explore")
			kid.Prompt(at(95), "look around", 0)
			kid.Call(at(96), "k1", "grep", []byte(`{}`))
			kid.Started(at(96), "k1")
			kid.Result(at(97), "k1", false, "")
			kid.ModelDone(at(98), telemetry.ModelCall{Model: "m", InputTokens: 5, OutputTokens: 1})
			kid.TurnEnd(at(98), "end_turn", "", telemetry.ModelCall{})
			tr.Started(at(94), "t1")
			tr.Result(at(99), "t1", false, "done")
			tr.Call(at(100), "c4", "edit", nil) // the turn ends before its result
			tr.TurnEnd(at(101), "error", "model: overloaded", telemetry.ModelCall{InputTokens: 1000, OutputTokens: 20, Cost: 0.0033, Priced: true})
			e.Close(time.Minute)

			spans := byName(t, r.Spans())
			if errs := r.Errors(); len(errs) > 0 {
				t.Fatal(errs)
			}
			turn, chat := spans["turn"], spans["chat claude-sonnet-4-5"]
			if turn.Parent != "" || !turn.Failed || turn.Error != "model: overloaded" || turn.Attrs["dsh.stop_reason"] != "error" ||
				turn.Attrs["gen_ai.conversation.id"] != "S1" || turn.Attrs["dsh.prompt.chars"] != int64(18) || turn.Attrs["dsh.prompt.images"] != int64(1) ||
				turn.Attrs["dsh.cost_usd"] != 0.0033 || !turn.Start.Equal(at(0)) || !turn.End.Equal(at(101)) {
				t.Errorf("turn span: %+v", turn)
			}
			if got := strings.Join(turn.Events, ","); got != map[bool]string{false: "", true: "assistant"}[content] {
				t.Errorf("content %v: the turn's events %q", content, got)
			}
			if turn.Resource["service.name"] != "dsh-test" || turn.Resource["service.version"] != "v9" {
				t.Errorf("resource: %v", turn.Resource)
			}
			if chat.Parent != turn.SpanID || chat.TraceID != turn.TraceID || chat.Attrs["gen_ai.request.model"] != "claude-sonnet-4-5" ||
				chat.Attrs["gen_ai.usage.input_tokens"] != int64(1000) || chat.Attrs["gen_ai.usage.output_tokens"] != int64(20) ||
				chat.Attrs["dsh.cost_usd"] != 0.0033 || chat.End.Sub(chat.Start) != 49*time.Millisecond {
				t.Errorf("chat span: %+v", chat)
			}
			for _, tt := range []struct {
				name, decision string
				asked, failed  bool
			}{
				{"execute_tool read", telemetry.DecisionAllowed, false, false},
				{"execute_tool bash", telemetry.DecisionAsked, true, true},
				{"execute_tool write", telemetry.DecisionDenied, true, true},
				{"execute_tool task", telemetry.DecisionAllowed, false, false},
			} {
				s := spans[tt.name]
				if s.Parent != turn.SpanID || s.Attrs["dsh.tool.decision"] != tt.decision || s.Attrs["dsh.tool.asked"] != tt.asked || s.Failed != tt.failed {
					t.Errorf("%s: %+v", tt.name, s)
				}
			}
			if bash := spans["execute_tool bash"]; bash.End.Sub(bash.Start) != 29*time.Millisecond || strings.Join(bash.Events, ",") != "permission asked,started" {
				t.Errorf("bash's duration and events: %v %v", bash.End.Sub(bash.Start), bash.Events)
			}
			kidTurn, grep := spans["turn@S2"], spans["execute_tool grep@S2"]
			if kidTurn.Parent != spans["execute_tool task"].SpanID || kidTurn.Attrs["dsh.agent"] != "explore" || grep.Parent != kidTurn.SpanID ||
				spans["chat m@S2"].Parent != kidTurn.SpanID || grep.Attrs["dsh.tool.decision"] != telemetry.DecisionAllowed {
				t.Errorf("the subagent's spans do not nest under its task: turn %+v grep %+v", kidTurn, grep)
			}
			if left := spans["execute_tool edit"]; left.Parent != turn.SpanID || !left.Failed || left.Error != "no result" || !left.End.Equal(at(101)) {
				t.Errorf("the call left open when the turn ended: %+v", left)
			}

			var text strings.Builder
			for _, s := range r.Spans() {
				for k, v := range s.Attrs {
					if str, ok := v.(string); ok {
						text.WriteString(k + "=" + str + "\n")
					}
				}
			}
			for _, secret := range []string{"secret bug", "secret.txt", "the secret is 42"} {
				if strings.Contains(text.String(), secret) != content {
					t.Errorf("content %v: %q sent: %v", content, secret, !content)
				}
			}
			h := r.Headers()
			ctype := map[string]string{telemetry.ProtocolHTTPProtobuf: "application/x-protobuf", telemetry.ProtocolHTTPJSON: "application/json"}[tt.protocol]
			if len(h) == 0 || h[0].Get("Authorization") != "Bearer t0k" || (h[0].Get("Content-Encoding") == "gzip") != content || h[0].Get("Content-Type") != ctype {
				t.Errorf("headers: %v", h)
			}
		})
	}
}

// Text added with DSH_OTEL_CONTENT is capped: a span is not a transcript.
func TestContentCapped(t *testing.T) {
	r := otlptest.New(t)
	e := start(t, r, telemetry.ProtocolHTTPProtobuf, true, false)
	tr := e.Session("S")
	tr.Prompt(time.Now(), strings.Repeat("é", 10_000), 0)
	tr.TurnEnd(time.Now(), "end_turn", "", telemetry.ModelCall{})
	e.Close(time.Minute)
	spans := r.Spans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	p, _ := spans[0].Attrs["dsh.prompt.text"].(string)
	if len(p) > 4096+len("…") || !strings.HasSuffix(p, "…") || spans[0].Attrs["dsh.prompt.chars"] != int64(10_000) {
		t.Errorf("prompt sent as %d bytes, chars %v", len(p), spans[0].Attrs["dsh.prompt.chars"])
	}
}

// A collector that refuses the spans is told to the user once, in the
// user's words, and nothing else is printed.
func TestRefusedSpansAreTold(t *testing.T) {
	r := otlptest.New(t)
	var warned []string
	e, err := telemetry.Start(telemetry.Config{Protocol: telemetry.ProtocolHTTPProtobuf, Endpoint: r.Base + "/v1/wrong", Timeout: time.Minute},
		"v", func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	tr := e.Session("S")
	tr.Prompt(time.Now(), "hi", 0)
	tr.TurnEnd(time.Now(), "end_turn", "", telemetry.ModelCall{})
	e.Close(time.Minute)
	if len(warned) != 1 || !strings.Contains(warned[0], "spans could not be sent to "+r.Base+"/v1/wrong") || !strings.Contains(warned[0], "400 Bad Request") {
		t.Errorf("warnings %q", warned)
	}
}
