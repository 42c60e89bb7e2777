package host

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/telemetry"
	"github.com/dsh-dev/dsh/internal/telemetry/otlptest"
)

func otelConfig(r *otlptest.Receiver) *telemetry.Config {
	return &telemetry.Config{Protocol: telemetry.ProtocolHTTPProtobuf, Endpoint: r.URL, Service: "dsh", Timeout: time.Minute}
}

// A real session's turn reaches an OTLP receiver on loopback when the session
// is closed: the turn, its model calls with tokens and cost, its tool calls
// with their decisions (a read run unasked, a write the user allowed, one the
// user refused), and a subagent's turn and call under its task call. Nothing
// the user or the model wrote is sent.
func TestTelemetryExportsTheSession(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.txt":                    "SECRET-FILE\n",
		".claude/agents/writer.md": "---\nname: writer\ndescription: Writes files.\ntools: Read, Write\n---\nWrite what you are told.\n",
	})
	p := scripted(t, `{"turns": [
		{"text": "SECRET-REPLY", "tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}},
			{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "SECRET-B\n"}},
			{"id": "w2", "name": "write", "args": {"path": "c.txt", "content": "SECRET-C\n"}}], "input_tokens": 1000, "output_tokens": 20},
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Write", "prompt": "TASK-W: write x.txt", "subagent_type": "writer"}}], "input_tokens": 1100, "output_tokens": 10},
		{"match": "TASK-W", "tool_calls": [{"id": "k1", "name": "write", "args": {"path": "x.txt", "content": "x\n"}}], "input_tokens": 30, "output_tokens": 3},
		{"match": "TASK-W", "text": "Wrote it.", "input_tokens": 40, "output_tokens": 4},
		{"text": "Done.", "input_tokens": 1200, "output_tokens": 5}]}`)
	r := otlptest.New(t)
	o := options(t, root, dir, p)
	o.Mode, o.Ask, o.Model = agent.ModeDefault, true, "claude-sonnet-4-5"
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	o.Telemetry = otelConfig(r)
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(func(e Event) {
		if e.Kind != KindPermission {
			return
		}
		var a struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(e.Permission.Request.Args, &a)
		if a.Path == "c.txt" {
			e.Permission.Answer(agent.Reject)
		} else {
			e.Permission.Answer(agent.AllowOnce)
		}
	})
	if stop, err := s.Prompt(t.Context(), "please fix SECRET-PROMPT"); err != nil || stop != agent.StopEndTurn {
		t.Fatalf("prompt: %v %v", stop, err)
	}
	sub.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}

	spans := r.Spans()
	var turns, chats []otlptest.Span
	calls := map[string]otlptest.Span{}
	for _, sp := range spans {
		switch sp.Attrs["gen_ai.operation.name"] {
		case "invoke_agent":
			turns = append(turns, sp)
		case "chat":
			chats = append(chats, sp)
		case "execute_tool":
			calls[sp.Attrs["gen_ai.tool.call.id"].(string)] = sp
		}
	}
	if len(turns) != 2 || len(chats) != 5 || len(calls) != 5 {
		t.Fatalf("%d turns, %d model calls, %d tool calls; want 2, 5, 5:\n%+v", len(turns), len(chats), len(calls), spans)
	}
	turn, kid := turns[0], turns[1]
	if kid.Attrs["gen_ai.conversation.id"] == s.ID() {
		turn, kid = kid, turn
	}
	if turn.Parent != "" || turn.Attrs["gen_ai.conversation.id"] != s.ID() || turn.Attrs["dsh.stop_reason"] != "end_turn" ||
		turn.Attrs["gen_ai.usage.input_tokens"] != int64(3300) || turn.Attrs["dsh.prompt.chars"] != int64(len("please fix SECRET-PROMPT")) {
		t.Errorf("the turn: %+v", turn)
	}
	if c, ok := turn.Attrs["dsh.cost_usd"].(float64); !ok || c <= 0 {
		t.Errorf("the turn's cost: %v", turn.Attrs["dsh.cost_usd"])
	}
	for _, c := range chats {
		want := turn.SpanID
		if c.Attrs["gen_ai.conversation.id"] != s.ID() {
			want = kid.SpanID
		}
		if c.Parent != want || c.Name != "chat claude-sonnet-4-5" || c.Attrs["gen_ai.usage.output_tokens"] == nil {
			t.Errorf("a model call: %+v", c)
		}
	}
	for _, tt := range []struct {
		id, tool, decision, parent string
		asked, failed              bool
	}{
		{"r1", "read", telemetry.DecisionAllowed, turn.SpanID, false, false},
		{"w1", "write", telemetry.DecisionAsked, turn.SpanID, true, false},
		{"w2", "write", telemetry.DecisionDenied, turn.SpanID, true, true},
		{"t1", "task", telemetry.DecisionAllowed, turn.SpanID, false, false},
		{"k1", "write", telemetry.DecisionAsked, kid.SpanID, true, false},
	} {
		c := calls[tt.id]
		if c.Name != "execute_tool "+tt.tool || c.Parent != tt.parent || c.Attrs["dsh.tool.decision"] != tt.decision ||
			c.Attrs["dsh.tool.asked"] != tt.asked || c.Failed != tt.failed || c.End.Before(c.Start) {
			t.Errorf("call %s: %+v", tt.id, c)
		}
	}
	if first := chats[0]; first.Start.Before(turn.Start) || calls["r1"].Start.Before(first.End) || turn.End.Before(calls["t1"].End) {
		t.Errorf("the spans are out of the stream's order: turn %v–%v, first model call %v–%v, r1 from %v",
			turn.Start, turn.End, first.Start, first.End, calls["r1"].Start)
	}
	if kid.Parent != calls["t1"].SpanID || kid.Attrs["dsh.agent"] != "writer" {
		t.Errorf("the subagent's turn is not under its task call: %+v", kid)
	}
	for _, sp := range spans {
		for k, v := range sp.Attrs {
			if str, ok := v.(string); ok && strings.Contains(str, "SECRET") {
				t.Errorf("%s: %s=%q sent without DSH_OTEL_CONTENT", sp.Name, k, str)
			}
		}
	}
}

// A collector that takes the request and never answers holds up nothing:
// Close returns while it still holds the request (were Close waiting for
// it, the test would hang), and the user is told the spans were not sent.
func TestTelemetryCollectorDownDoesNotHoldUpClose(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	r := otlptest.New(t)
	release := r.Hold()
	defer release()
	p := scripted(t, `{"turns": [{"text": "hi"}]}`)
	o := options(t, root, dir, p)
	var mu sync.Mutex
	var warned []string
	o.Warn = func(s string) {
		mu.Lock()
		warned = append(warned, s)
		mu.Unlock()
	}
	o.Telemetry = otelConfig(r)
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.Contains(warned[0], "were not sent to "+r.URL) {
		t.Errorf("warnings %q, want one that the spans were not sent", warned)
	}
}
