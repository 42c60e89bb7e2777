package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
)

// server is an httptest server on 127.0.0.1 that records every request and
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
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("request to %s, want /v1/chat/completions", r.URL.Path)
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

// chunk is one chat.completion.chunk line carrying a delta for choice 0.
func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1764500000,"model":"gpt-test","system_fingerprint":"fp_1","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`+"\n\n", delta, f)
}

func usage(in, out int) string {
	return fmt.Sprintf(`data: {"id":"chatcmpl-7","object":"chat.completion.chunk","created":1764500000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", in, out, in+out)
}

const done = "data: [DONE]\n\n"

func content(s string) string {
	b, _ := json.Marshal(s)
	return chunk(`{"content":`+string(b)+`}`, "")
}

func toolStart(index int, id, name string) string {
	return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, index, id, name), "")
}

func toolArgs(index int, fragment string) string {
	b, _ := json.Marshal(fragment)
	return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, index, b), "")
}

func simpleText(text string) []string {
	return []string{chunk(`{"role":"assistant","content":""}`, ""), content(text), chunk(`{}`, "stop"), usage(5, 2), done}
}

func writeSSE(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, l := range lines {
		_, _ = io.WriteString(w, l)
		w.(http.Flusher).Flush()
	}
}

// cut writes lines and then drops the connection mid-body.
func cut(t *testing.T, w http.ResponseWriter, lines ...string) {
	writeSSE(w, lines...)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

func jsonError(w http.ResponseWriter, status int, code, msg string, header map[string]string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"requests","param":null,"code":%q}}`, msg, code)
}

type backoffCall struct {
	attempt    int
	retryAfter time.Duration
}

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
	cfg.BaseURL = s.URL + "/v1"
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

func TestStreamTextAndToolCalls(t *testing.T) {
	lines := []string{
		chunk(`{"role":"assistant","content":""}`, ""),
		content("Reading "),
		content("both."),
		toolStart(0, "call_a", "read"),
		toolArgs(0, `{"pa`),
		toolArgs(0, `th": "a.go"}`),
		toolStart(1, "call_b", "bash"),
		toolArgs(1, `{"command": "go test ./..."}`),
		chunk(`{}`, "tool_calls"),
		usage(120, 33),
		done,
	}
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, lines...) })
	p := newProvider(t, s, Config{APIKey: "sk-local", Model: "qwen3-coder"})
	schema := `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	var deltas []provider.Delta
	resp, err := p.Stream(context.Background(), provider.Request{
		System:    "You are dsh.",
		Messages:  []provider.Message{userText("look at a.go and test")},
		Tools:     []provider.ToolDef{{Name: "read", Description: "Read a file.", Schema: []byte(schema)}},
		MaxTokens: 4096,
	}, func(d provider.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Part{
		{Type: provider.PartText, Text: "Reading both."},
		{Type: provider.PartToolUse, ID: "call_a", Name: "read", Args: []byte(`{"path": "a.go"}`)},
		{Type: provider.PartToolUse, ID: "call_b", Name: "bash", Args: []byte(`{"command": "go test ./..."}`)},
	}
	if !reflect.DeepEqual(resp.Message.Parts, want) {
		t.Errorf("parts:\n got %+v\nwant %+v", resp.Message.Parts, want)
	}
	if resp.StopReason != provider.StopToolUse || resp.InputTokens != 120 || resp.OutputTokens != 33 {
		t.Errorf("stop %q usage %d/%d", resp.StopReason, resp.InputTokens, resp.OutputTokens)
	}
	wantDeltas := []provider.Delta{{Type: provider.DeltaText, Text: "Reading "}, {Type: provider.DeltaText, Text: "both."}}
	if !reflect.DeepEqual(deltas, wantDeltas) {
		t.Errorf("deltas %+v", deltas)
	}
	var wantBody map[string]any
	_ = json.Unmarshal([]byte(`{
	  "model": "qwen3-coder",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_tokens": 4096,
	  "messages": [
	    {"role": "system", "content": "You are dsh."},
	    {"role": "user", "content": "look at a.go and test"}
	  ],
	  "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file.",
	    "parameters": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]
	}`), &wantBody)
	if got := s.body(0); !reflect.DeepEqual(got, wantBody) {
		b, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("request body:\n%s", b)
	}
	if h := s.heads[0].Get("Authorization"); h != "Bearer sk-local" {
		t.Errorf("authorization %q", h)
	}
}

func TestRequestReplaysHistory(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	t.Setenv("OPENAI_API_KEY", "sk-from-env") // must not leak to the local server
	p := newProvider(t, s, Config{})          // a local server: no key
	history := []provider.Message{
		userText("fix it"),
		{Role: provider.RoleAssistant, Parts: []provider.Part{
			{Type: provider.PartThinking, Text: "private reasoning", Signature: "sig"},
			{Type: provider.PartText, Text: "Looking."},
			{Type: provider.PartToolUse, ID: "call_1", Name: "read", Args: []byte(`{"path":"a.go"}`)},
			{Type: provider.PartToolUse, ID: "call_2", Name: "bash", Args: []byte(`{"command":"false"}`)},
		}},
		{Role: provider.RoleUser, Parts: []provider.Part{
			{Type: provider.PartToolResult, ID: "call_1", Content: []card.Content{card.Text("1: package a"), card.Image("image/png", "iVBORw0KGgo=")}},
			{Type: provider.PartToolResult, ID: "call_2", IsError: true, Content: []card.Content{card.Text("exit status 1")}},
			{Type: provider.PartText, Text: "also check b.go"},
		}},
		{Role: provider.RoleAssistant, Parts: []provider.Part{{Type: provider.PartThinking, Text: "only thoughts"}}},
	}
	if _, err := p.Stream(context.Background(), provider.Request{Messages: history}, nil); err != nil {
		t.Fatal(err)
	}
	var want any
	_ = json.Unmarshal([]byte(`[
	  {"role":"user","content":"fix it"},
	  {"role":"assistant","content":"Looking.","tool_calls":[
	    {"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},
	    {"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"false\"}"}}
	  ]},
	  {"role":"tool","tool_call_id":"call_1","content":"1: package a\n[image omitted: image/png, 12 bytes of base64]"},
	  {"role":"tool","tool_call_id":"call_2","content":"Error: exit status 1"},
	  {"role":"user","content":"also check b.go"}
	]`), &want)
	body := s.body(0)
	if !reflect.DeepEqual(body["messages"], want) {
		b, _ := json.MarshalIndent(body["messages"], "", "  ")
		t.Errorf("messages:\n%s", b)
	}
	if body["model"] != DefaultModel {
		t.Errorf("model %v", body["model"])
	}
	if h := s.heads[0].Get("Authorization"); h != "" {
		t.Errorf("authorization %q sent without a key", h)
	}
}

func TestReasoningDeltas(t *testing.T) {
	lines := []string{
		chunk(`{"role":"assistant","content":null,"reasoning_content":"Check the "}`, ""),
		chunk(`{"content":null,"reasoning_content":"tests."}`, ""),
		content("Done."),
		chunk(`{}`, "stop"),
		done,
	}
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, lines...) })
	p := newProvider(t, s, Config{})
	var deltas []provider.Delta
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}},
		func(d provider.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Part{{Type: provider.PartThinking, Text: "Check the tests."}, {Type: provider.PartText, Text: "Done."}}
	if !reflect.DeepEqual(resp.Message.Parts, want) || resp.StopReason != provider.StopEndTurn {
		t.Errorf("parts %+v stop %q", resp.Message.Parts, resp.StopReason)
	}
	wantDeltas := []provider.Delta{
		{Type: provider.DeltaThinking, Text: "Check the "},
		{Type: provider.DeltaThinking, Text: "tests."},
		{Type: provider.DeltaText, Text: "Done."},
	}
	if !reflect.DeepEqual(deltas, wantDeltas) {
		t.Errorf("deltas %+v", deltas)
	}
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		stop   provider.StopReason
		nParts int
	}{
		{"stop with tool calls", []string{toolStart(0, "c1", "job_list"), chunk(`{}`, "stop"), done}, provider.StopToolUse, 1},
		{"length drops a cut call", []string{content("x"), toolStart(0, "c1", "write"), toolArgs(0, `{"path": "a`), chunk(`{}`, "length"), done}, provider.StopMaxTokens, 1},
		{"content filter", []string{content("no"), chunk(`{}`, "content_filter"), done}, provider.StopRefusal, 1},
		{"refusal", []string{chunk(`{"refusal":"I can't help with that."}`, ""), chunk(`{}`, "stop"), done}, provider.StopRefusal, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, tt.lines...) })
			p := newProvider(t, s, Config{})
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tt.stop || len(resp.Message.Parts) != tt.nParts {
				t.Errorf("stop %q parts %+v", resp.StopReason, resp.Message.Parts)
			}
		})
	}
}

func TestMalformedArguments(t *testing.T) {
	lines := []string{toolStart(0, "c1", "edit"), toolArgs(0, `{"path": `), chunk(`{}`, "tool_calls"), done}
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, lines...) })
	p := newProvider(t, s, Config{})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || err == nil || err.Error() != "openai: the model sent malformed arguments for the edit tool call" {
		t.Errorf("resp %v err %v", resp, err)
	}
}

func TestUnauthorized(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 401, "invalid_api_key", "Incorrect API key provided", nil)
	})
	p := newProvider(t, s, Config{APIKey: "sk-bad"})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || !errors.Is(err, provider.ErrAuth) {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if want := "The server at " + s.URL + "/v1 rejected the API key (401). Check OPENAI_API_KEY."; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if s.requests() != 1 {
		t.Errorf("%d requests", s.requests())
	}
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			jsonError(w, 429, "rate_limit_exceeded", "Rate limit reached for requests", map[string]string{"Retry-After": "3"})
			return
		}
		writeSSE(w, simpleText("later")...)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "later" {
		t.Errorf("parts %+v", resp.Message.Parts)
	}
	if want := []backoffCall{{1, 3 * time.Second}}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("backoff %v, want %v", rec.calls, want)
	}
}

func TestRateLimitGivesUp(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 429, "rate_limit_exceeded", "Rate limit reached", map[string]string{"Retry-After-Ms": "20"})
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff, MaxRetries: 1})
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if want := "openai: rate limited (429: rate_limit_exceeded: Rate limit reached) (gave up after 2 attempts)"; err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %q", err, want)
	}
	if want := []backoffCall{{1, 20 * time.Millisecond}}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("backoff %v, want %v", rec.calls, want)
	}
}

func TestQuotaIsNotRetried(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 429, "insufficient_quota", "You exceeded your current quota", nil)
	})
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff})
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "no quota left") || s.requests() != 1 {
		t.Errorf("error %v after %d requests", err, s.requests())
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			jsonError(w, 500, "server_error", "The server had an error", nil)
			return
		}
		writeSSE(w, simpleText("recovered")...)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "recovered" || s.requests() != 2 {
		t.Errorf("parts %+v after %d requests", resp.Message.Parts, s.requests())
	}
}

func TestServerErrorForever(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		jsonError(w, 503, "unavailable", "Service Unavailable", nil)
	})
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff, MaxRetries: 2})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if resp != nil || err == nil {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if want := "openai: server error (503: unavailable: Service Unavailable) (gave up after 3 attempts)"; err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if s.requests() != 3 {
		t.Errorf("%d requests", s.requests())
	}
}

func TestStreamCutInToolCall(t *testing.T) {
	lines := []string{content("Writing."), toolStart(0, "call_w", "write"), toolArgs(0, `{"path": "a.txt", "cont`)}
	s := newServer(t, func(_ int, w http.ResponseWriter) { cut(t, w, lines...) })
	rec := &recorder{}
	p := newProvider(t, s, Config{Backoff: rec.backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, func(provider.Delta) {})
	if resp != nil || err == nil {
		t.Fatalf("resp %+v err %v: a broken stream must return no response", resp, err)
	}
	if !strings.Contains(err.Error(), "in the middle of a write tool call") {
		t.Errorf("error %q", err)
	}
	if s.requests() != 1 || len(rec.calls) != 0 {
		t.Errorf("%d requests, %d backoffs after text was delivered", s.requests(), len(rec.calls))
	}
}

func TestStreamWithoutFinishIsRetried(t *testing.T) {
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			writeSSE(w, toolStart(0, "call_w", "write"), toolArgs(0, `{"path"`)) // ends cleanly, unfinished
			return
		}
		writeSSE(w, simpleText("whole")...)
	})
	p := newProvider(t, s, Config{Backoff: (&recorder{}).backoff})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "whole" || s.requests() != 2 {
		t.Errorf("parts %+v after %d requests", resp.Message.Parts, s.requests())
	}
}

func TestCancelDuringStream(t *testing.T) {
	// The server cancels the caller's context once it has sent a first delta,
	// then stalls: only the cancel can end the stream.
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	s := newServer(t, func(_ int, w http.ResponseWriter) {
		writeSSE(w, content("working"))
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

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	p, err := New(Config{BaseURL: "http://" + addr + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err == nil || !strings.Contains(err.Error(), "is the server at http://"+addr+"/v1 running?") {
		t.Errorf("error %v", err)
	}
}

func TestNewNeedsKeyOrBaseURL(t *testing.T) {
	_, err := New(Config{})
	if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("error %v", err)
	}
}
