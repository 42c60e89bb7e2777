package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// server is an httptest server on 127.0.0.1 that records every request body and
// answers the nth request (0-based) with handle.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	heads  []http.Header
}

func newServer(t *testing.T, handle func(n int, w http.ResponseWriter)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			t.Errorf("request to %s, want /v1/messages", r.URL.Path)
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.heads = append(s.heads, r.Header.Clone())
		s.mu.Unlock()
		handle(n, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *server) body(n int) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[n]
}

// event is one server-sent event as the Messages API writes it.
func event(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		_, _ = io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// cut writes events and then drops the connection without ending the chunked
// body, as a network failure would.
func cut(t *testing.T, w http.ResponseWriter, events ...string) {
	writeSSE(w, events...)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

func messageStart(input int) string {
	return event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, input))
}

func blockStart(i int, block string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
}

func blockDelta(i int, delta string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, delta))
}

func blockStop(i int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

func messageEnd(stop string, output int) []string {
	return []string{
		event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, output)),
		event("message_stop", `{"type":"message_stop"}`),
	}
}

func textDelta(i int, s string) string {
	b, _ := json.Marshal(s)
	return blockDelta(i, `{"type":"text_delta","text":`+string(b)+`}`)
}

// simpleText is a complete one-block answer.
func simpleText(text string) []string {
	return append([]string{
		messageStart(10),
		blockStart(0, `{"type":"text","text":""}`),
		textDelta(0, text),
		blockStop(0),
	}, messageEnd("end_turn", 3)...)
}

func jsonError(w http.ResponseWriter, status int, typ, msg string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
}

type backoffCall struct {
	attempt    int
	retryAfter time.Duration
}

// recorder is a Backoff that records what it was asked and waits not at all.
type recorder struct {
	mu    sync.Mutex
	calls []backoffCall
}

func (r *recorder) backoff(attempt int, retryAfter time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, backoffCall{attempt, retryAfter})
	return 0
}

func newProvider(t *testing.T, s *server, cfg Config) *Provider {
	t.Helper()
	cfg.BaseURL = s.URL
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test"
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(int, time.Duration) time.Duration { return 0 }
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userText(s string) provider.Message {
	return provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: s}}}
}

func collect(ds *[]provider.Delta) func(provider.Delta) {
	return func(d provider.Delta) { *ds = append(*ds, d) }
}

func TestStreamThinkingTextAndToolUse(t *testing.T) {
	events := []string{
		messageStart(40),
		blockStart(0, `{"type":"thinking","thinking":"","signature":""}`),
		blockDelta(0, `{"type":"thinking_delta","thinking":"The user wants "}`),
		blockDelta(0, `{"type":"thinking_delta","thinking":"the file."}`),
		blockDelta(0, `{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}`),
		blockStop(0),
		blockStart(1, `{"type":"text","text":""}`),
		textDelta(1, "Let me "),
		textDelta(1, "read it."),
		blockStop(1),
		blockStart(2, `{"type":"tool_use","id":"toolu_01","name":"read","input":{}}`),
		blockDelta(2, `{"type":"input_json_delta","partial_json":""}`),
		blockDelta(2, `{"type":"input_json_delta","partial_json":"{\"path\": \"ma"}`),
		blockDelta(2, `{"type":"input_json_delta","partial_json":"in.go\", \"offset\": 3}"}`),
		blockStop(2),
	}
	events = append(events, messageEnd("tool_use", 55)...)
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, events...) })
	p := newProvider(t, s, Config{Model: "claude-test", Thinking: 2048})

	schema := `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"}},"required":["path"],"additionalProperties":false}`
	var deltas []provider.Delta
	resp, err := p.Stream(context.Background(), provider.Request{
		System:    "You are dsh.",
		Messages:  []provider.Message{userText("show main.go")},
		Tools:     []provider.ToolDef{{Name: "read", Description: "Read a file.", Schema: []byte(schema)}},
		MaxTokens: 1000,
	}, collect(&deltas))
	if err != nil {
		t.Fatal(err)
	}

	wantParts := []provider.Part{
		{Type: provider.PartThinking, Text: "The user wants the file.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
		{Type: provider.PartText, Text: "Let me read it."},
		{Type: provider.PartToolUse, ID: "toolu_01", Name: "read", Args: []byte(`{"path": "main.go", "offset": 3}`)},
	}
	if !reflect.DeepEqual(resp.Message.Parts, wantParts) {
		t.Errorf("parts:\n got %+v\nwant %+v", resp.Message.Parts, wantParts)
	}
	if resp.Message.Role != provider.RoleAssistant || resp.StopReason != provider.StopToolUse {
		t.Errorf("role %q stop %q", resp.Message.Role, resp.StopReason)
	}
	if resp.InputTokens != 40 || resp.OutputTokens != 55 {
		t.Errorf("usage in %d out %d, want 40 55", resp.InputTokens, resp.OutputTokens)
	}
	wantDeltas := []provider.Delta{
		{Type: provider.DeltaThinking, Text: "The user wants "},
		{Type: provider.DeltaThinking, Text: "the file."},
		{Type: provider.DeltaText, Text: "Let me "},
		{Type: provider.DeltaText, Text: "read it."},
	}
	if !reflect.DeepEqual(deltas, wantDeltas) {
		t.Errorf("deltas:\n got %+v\nwant %+v", deltas, wantDeltas)
	}

	body := s.body(0)
	var wantSchema any
	_ = json.Unmarshal([]byte(schema), &wantSchema)
	want := map[string]any{
		"model":      "claude-test",
		"max_tokens": float64(2048 + DefaultMaxTokens), // the budget exceeds the request's 1000
		"stream":     true,
		"thinking":   map[string]any{"type": "enabled", "budget_tokens": 2048.0},
		"system":     []any{map[string]any{"type": "text", "text": "You are dsh.", "cache_control": map[string]any{"type": "ephemeral"}}},
		"tools":      []any{map[string]any{"name": "read", "description": "Read a file.", "input_schema": wantSchema}},
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "show main.go", "cache_control": map[string]any{"type": "ephemeral"}},
		}}},
	}
	if !reflect.DeepEqual(body, want) {
		got, _ := json.MarshalIndent(body, "", "  ")
		exp, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("request body:\n%s\nwant\n%s", got, exp)
	}
	if h := s.heads[0].Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("authorization header %q", h)
	}
}

func TestRequestReplaysHistory(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("done")...) })
	p := newProvider(t, s, Config{})
	history := []provider.Message{
		userText("fix the bug"),
		{Role: provider.RoleAssistant, Parts: []provider.Part{
			{Type: provider.PartThinking, Text: "Look first.", Signature: "sig-abc=="},
			{Type: provider.PartThinking, Signature: RedactedPrefix + "EmwKAhgB"},
			{Type: provider.PartThinking, Text: "unsigned thoughts from another provider"},
			{Type: provider.PartThinking, Text: "OpenAI's summary", Signature: provider.OpenAIReasoning + `{"id":"rs_1"}`},
			{Type: provider.PartText, Text: "Reading."},
			{Type: provider.PartToolUse, ID: "toolu_1", Name: "read", Args: []byte(`{"path":"a.go"}`)},
			{Type: provider.PartToolUse, ID: "toolu_2", Name: "bash", Args: []byte(`{"command":"false"}`)},
		}},
		{Role: provider.RoleUser, Parts: []provider.Part{
			{Type: provider.PartToolResult, ID: "toolu_1", Content: []card.Content{card.Text("1: package a"), card.Image("image/png", "iVBORw0KGgo=")}},
			{Type: provider.PartToolResult, ID: "toolu_2", IsError: true, Content: []card.Content{card.Text("exit status 1")}},
		}},
	}
	resp, err := p.Stream(context.Background(), provider.Request{Messages: history}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != provider.StopEndTurn || len(resp.Message.Parts) != 1 || resp.Message.Parts[0].Text != "done" {
		t.Errorf("response %+v", resp)
	}
	var want any
	_ = json.Unmarshal([]byte(`[
	  {"role":"user","content":[{"type":"text","text":"fix the bug"}]},
	  {"role":"assistant","content":[
	    {"type":"thinking","thinking":"Look first.","signature":"sig-abc=="},
	    {"type":"redacted_thinking","data":"EmwKAhgB"},
	    {"type":"text","text":"Reading."},
	    {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}},
	    {"type":"tool_use","id":"toolu_2","name":"bash","input":{"command":"false"}}
	  ]},
	  {"role":"user","content":[
	    {"type":"tool_result","tool_use_id":"toolu_1","content":[
	      {"type":"text","text":"1: package a"},
	      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}
	    ]},
	    {"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"exit status 1"}],
	     "cache_control":{"type":"ephemeral"}}
	  ]}
	]`), &want)
	body := s.body(0)
	if !reflect.DeepEqual(body["messages"], want) {
		got, _ := json.MarshalIndent(body["messages"], "", "  ")
		t.Errorf("messages:\n%s", got)
	}
	if body["model"] != DefaultModel || body["max_tokens"] != float64(DefaultMaxTokens) {
		t.Errorf("model %v max_tokens %v", body["model"], body["max_tokens"])
	}
	if _, ok := body["thinking"]; ok {
		t.Errorf("thinking sent although not configured: %v", body["thinking"])
	}
}

func TestRedactedThinkingRoundTrip(t *testing.T) {
	events := append([]string{
		messageStart(5),
		blockStart(0, `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}`),
		blockStop(0),
		blockStart(1, `{"type":"text","text":""}`),
		textDelta(1, "ok"),
		blockStop(1),
	}, messageEnd("end_turn", 2)...)
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, events...) })
	p := newProvider(t, s, Config{Thinking: ThinkingAdaptive})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Part{Type: provider.PartThinking, Signature: RedactedPrefix + "EmwKAhgBEgy3va3pzix"}
	if !reflect.DeepEqual(resp.Message.Parts[0], want) {
		t.Errorf("part %+v, want %+v", resp.Message.Parts[0], want)
	}
	if got := s.body(0)["thinking"]; !reflect.DeepEqual(got, map[string]any{"type": "adaptive", "display": "summarized"}) {
		t.Errorf("thinking %v", got)
	}
	// Replaying the message sends the same opaque data back.
	_, err = p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi"), resp.Message, userText("again")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.body(1)["messages"].([]any)
	first := msgs[1].(map[string]any)["content"].([]any)[0]
	if !reflect.DeepEqual(first, map[string]any{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}) {
		t.Errorf("replayed %v", first)
	}
}

func TestUnauthorized(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"a key", Config{}, "Anthropic rejected the API key (401). Check ANTHROPIC_API_KEY."},
		{"a gateway's token", Config{AuthToken: "gw"}, "Anthropic rejected the token (401). Check ANTHROPIC_AUTH_TOKEN."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(_ int, w http.ResponseWriter) {
				jsonError(w, 401, "authentication_error", "invalid x-api-key", nil)
			})
			p := newProvider(t, s, tc.cfg)
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
			if resp != nil || !errors.Is(err, provider.ErrAuth) {
				t.Fatalf("resp %v err %v, want ErrAuth", resp, err)
			}
			if err.Error() != tc.want {
				t.Errorf("message %q", err)
			}
			if s.requests() != 1 {
				t.Errorf("%d requests: a rejected key must not be retried", s.requests())
			}
		})
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			jsonError(w, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"Retry-After": "7"})
			return
		}
		writeSSE(w, simpleText("after the wait")...)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "after the wait" {
		t.Errorf("parts %+v", resp.Message.Parts)
	}
	if want := []backoffCall{{1, 7 * time.Second}}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("backoff calls %v, want %v", rec.calls, want)
	}
}

func TestRateLimitGivesUp(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 429, "rate_limit_error", "slow down", map[string]string{"Retry-After": "1"})
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff, MaxRetries: 2})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || err == nil {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if want := "anthropic: rate limited (429: rate_limit_error: slow down) (gave up after 3 attempts)"; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if s.requests() != 3 {
		t.Errorf("%d requests, want 3", s.requests())
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	for _, status := range []int{500, 529} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s := newServer(t, func(n int, w http.ResponseWriter) {
				if n == 0 {
					jsonError(w, status, "overloaded_error", "Overloaded", nil)
					return
				}
				writeSSE(w, simpleText("fine now")...)
			})
			rec := &recorder{}
			p := newProvider(t, s, Config{Backoff: rec.backoff})
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Parts[0].Text != "fine now" || s.requests() != 2 {
				t.Errorf("parts %+v after %d requests", resp.Message.Parts, s.requests())
			}
			if want := []backoffCall{{1, 0}}; !reflect.DeepEqual(rec.calls, want) {
				t.Errorf("backoff calls %v, want %v", rec.calls, want)
			}
		})
	}
}

func TestServerErrorForever(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 500, "api_error", "Internal server error", nil)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff, MaxRetries: 3})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || err == nil {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if want := "anthropic: server error (500: api_error: Internal server error) (gave up after 4 attempts)"; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if want := []backoffCall{{1, 0}, {2, 0}, {3, 0}}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("backoff calls %v, want %v", rec.calls, want)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 400, "invalid_request_error", "messages: text content blocks must be non-empty", nil)
	})
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff})
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	want := "anthropic: the request was rejected (400: invalid_request_error: messages: text content blocks must be non-empty)"
	if err == nil || err.Error() != want || s.requests() != 1 {
		t.Errorf("error %v after %d requests, want %q once", err, s.requests(), want)
	}
}

// toolCallCut is a stream that shows text, starts a tool call and breaks off.
func toolCallCut(withText bool) []string {
	ev := []string{messageStart(10)}
	i := 0
	if withText {
		ev = append(ev, blockStart(0, `{"type":"text","text":""}`), textDelta(0, "Editing now."), blockStop(0))
		i = 1
	}
	return append(ev,
		blockStart(i, `{"type":"tool_use","id":"toolu_9","name":"edit","input":{}}`),
		blockDelta(i, `{"type":"input_json_delta","partial_json":"{\"path\": \"a.go\", \"old_str"}`),
	)
}

func TestStreamCutInToolCall(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { cut(t, w, toolCallCut(true)...) })
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	var deltas []provider.Delta
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, collect(&deltas))
	if resp != nil || err == nil {
		t.Fatalf("resp %+v err %v: a broken stream must return no response", resp, err)
	}
	if !strings.Contains(err.Error(), "in the middle of a edit tool call") || !strings.Contains(err.Error(), "interrupted after it had started") {
		t.Errorf("error %q", err)
	}
	// Text had reached the caller, so resending would show it twice.
	if s.requests() != 1 || len(rec.calls) != 0 {
		t.Errorf("%d requests, %d backoffs: a stream that already delivered text must not be retried", s.requests(), len(rec.calls))
	}
	if len(deltas) != 1 || deltas[0].Text != "Editing now." {
		t.Errorf("deltas %+v", deltas)
	}
}

func TestStreamEndsEarlyBeforeOutputIsRetried(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			writeSSE(w, toolCallCut(false)...) // a clean end of body, but no message_stop
			return
		}
		writeSSE(w, simpleText("second try")...)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "second try" || s.requests() != 2 {
		t.Errorf("parts %+v after %d requests", resp.Message.Parts, s.requests())
	}
}

func TestStreamCutForever(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { cut(t, w, toolCallCut(false)...) })
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff, MaxRetries: 1})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || err == nil {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if !strings.Contains(err.Error(), "in the middle of a edit tool call") || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Errorf("error %q", err)
	}
}

func TestOverloadedErrorEventBeforeOutputIsRetried(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			writeSSE(w, messageStart(3), event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
			return
		}
		writeSSE(w, simpleText("recovered")...)
	})
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "recovered" || s.requests() != 2 {
		t.Errorf("parts %+v after %d requests", resp.Message.Parts, s.requests())
	}
}

func TestMaxTokensDropsUnfinishedToolCall(t *testing.T) {
	events := append([]string{
		messageStart(10),
		blockStart(0, `{"type":"text","text":""}`),
		textDelta(0, "Writing the file."),
		blockStop(0),
		blockStart(1, `{"type":"tool_use","id":"toolu_3","name":"write","input":{}}`),
		blockDelta(1, `{"type":"input_json_delta","partial_json":"{\"path\": \"big.txt\", \"content\": \"aaaa"}`),
		blockStop(1),
	}, messageEnd("max_tokens", 100)...)
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, events...) })
	p := newProvider(t, s, Config{})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Part{{Type: provider.PartText, Text: "Writing the file."}}
	if resp.StopReason != provider.StopMaxTokens || !reflect.DeepEqual(resp.Message.Parts, want) {
		t.Errorf("stop %q parts %+v", resp.StopReason, resp.Message.Parts)
	}
}

func TestCancelDuringStream(t *testing.T) {
	// The server cancels the caller's context once it has sent a first delta,
	// then stalls: only the cancel can end the stream.
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		writeSSE(w, messageStart(1), blockStart(0, `{"type":"text","text":""}`), textDelta(0, "thinking about it"))
		cancel()
		<-release
	})
	defer close(release)
	p := newProvider(t, s, Config{})
	resp, err := p.Stream(ctx, provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("resp %v err %v, want context.Canceled", resp, err)
	}
	if s.requests() != 1 {
		t.Errorf("%d requests after cancel", s.requests())
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no key", Config{}, "no Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"},
		{"small budget", Config{APIKey: "k", Thinking: 100}, "anthropic: a thinking budget must be at least 1024 tokens, got 100"},
		{"bad mode", Config{APIKey: "k", Thinking: -2}, "anthropic: invalid thinking setting -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New(Config{}); !errors.Is(err, provider.ErrAuth) {
		t.Errorf("missing key error %v does not wrap ErrAuth", err)
	}
	if _, err := New(Config{BaseURL: "http://127.0.0.1:1"}); err != nil {
		t.Errorf("a base URL without key: %v", err)
	}
}

func TestToolInput(t *testing.T) {
	tests := []struct {
		name    string
		deltas  []string
		want    string // the call's Args; "" means Stream fails
		wantErr string
	}{
		{"no input", nil, `{}`, ""},
		{"empty fragments", []string{`""`}, `{}`, ""},
		{"fragments", []string{`"{\"a\":"`, `"[1, 2]}"`}, `{"a":[1, 2]}`, ""},
		{"malformed", []string{`"{\"a\": tru"`}, "", "anthropic: the model sent malformed input for the job_list tool call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := []string{messageStart(1), blockStart(0, `{"type":"tool_use","id":"toolu_1","name":"job_list","input":{}}`)}
			for _, d := range tt.deltas {
				ev = append(ev, blockDelta(0, `{"type":"input_json_delta","partial_json":`+d+`}`))
			}
			ev = append(append(ev, blockStop(0)), messageEnd("tool_use", 1)...)
			s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, ev...) })
			p := newProvider(t, s, Config{})
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
			if tt.wantErr != "" {
				if resp != nil || err == nil || err.Error() != tt.wantErr {
					t.Fatalf("resp %v err %v, want %q", resp, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(resp.Message.Parts[0].Args); got != tt.want {
				t.Errorf("args %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBaseURLWithoutKey(t *testing.T) {
	// The SDK must not pick credentials from the environment behind our back.
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-env")
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("proxied")...) })
	p, err := New(Config{BaseURL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "proxied" {
		t.Errorf("parts %+v", resp.Message.Parts)
	}
	if h := s.heads[0].Get("Authorization") + s.heads[0].Get("X-Api-Key"); h != "" {
		t.Errorf("a credential was sent: %q", h)
	}
}

// Claude Code's aliases (--model opus, ANTHROPIC_MODEL=sonnet, /model haiku)
// reach the API as the model they name; Bedrock in its own form.
func TestModelAlias(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("hi")...) })
	p := newProvider(t, s, Config{Model: "opus"})
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), provider.Request{Model: "haiku", Messages: []provider.Message{userText("hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := []any{s.body(0)["model"], s.body(1)["model"]}; got[0] != models.ClaudeAlias("opus") || got[1] != models.ClaudeAlias("haiku") || got[0] == "opus" {
		t.Errorf("models sent %v", got)
	}
}
