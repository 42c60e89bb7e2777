package openai

import (
	"context"
	"encoding/json"
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
)

// rEvent is one Responses server-sent event, shaped as the API reference
// documents its streaming events.
func rEvent(typ string, fields string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":0%s}\n\n", typ, typ, fields)
}

// rResponse is a response object with output items and usage.
func rResponse(status, incomplete string, output ...string) string {
	inc := "null"
	if incomplete != "" {
		inc = fmt.Sprintf(`{"reason":%q}`, incomplete)
	}
	return fmt.Sprintf(`{"id":"resp_1","object":"response","created_at":1764500000,"status":%q,"model":"gpt-5.5","output":[%s],"incomplete_details":%s,"usage":{"input_tokens":42,"input_tokens_details":{"cached_tokens":30},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":49}}`,
		status, strings.Join(output, ","), inc)
}

const (
	reasoningItem = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look first."},{"type":"summary_text","text":"Then read."}],"encrypted_content":"gAAAA-secret"}`
	callItem      = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","status":"completed"}`
	messageItem   = `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done.","annotations":[]}]}`
)

// toolTurn is a turn that reasons (two summary parts), then calls a tool.
var toolTurn = []string{
	rEvent("response.created", `,"response":`+rResponse("in_progress", "")),
	rEvent("response.output_item.added", `,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}`),
	rEvent("response.reasoning_summary_part.added", `,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`),
	rEvent("response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Look first."`),
	rEvent("response.reasoning_summary_part.added", `,"item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}`),
	rEvent("response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Then read."`),
	rEvent("response.output_item.done", `,"output_index":0,"item":`+reasoningItem),
	rEvent("response.output_item.added", `,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"","status":"in_progress"}`),
	rEvent("response.function_call_arguments.delta", `,"item_id":"fc_1","output_index":1,"delta":"{\"path\":\"a.go\"}"`),
	rEvent("response.output_item.done", `,"output_index":1,"item":`+callItem),
	rEvent("response.completed", `,"response":`+rResponse("completed", "", reasoningItem, callItem)),
}

// textTurn answers in text.
var textTurn = []string{
	rEvent("response.created", `,"response":`+rResponse("in_progress", "")),
	rEvent("response.output_item.added", `,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}`),
	rEvent("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Do"`),
	rEvent("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"ne."`),
	rEvent("response.output_item.done", `,"output_index":0,"item":`+messageItem),
	rEvent("response.completed", `,"response":`+rResponse("completed", "", messageItem)),
}

// responsesServer answers POST /v1/responses with the nth script and records
// the raw request bodies.
type responsesServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newResponsesServer(t *testing.T, turns ...[]string) *responsesServer {
	t.Helper()
	s := &responsesServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/responses" {
			t.Errorf("request to %s, want /v1/responses", r.URL.Path)
		}
		raw, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, raw)
		s.mu.Unlock()
		if n >= len(turns) {
			jsonError(w, http.StatusBadRequest, "no_more", "no more turns", nil)
			return
		}
		writeSSE(w, turns[n]...)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *responsesServer) body(t *testing.T, n int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(s.bodies[n], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func responsesProvider(t *testing.T, s *responsesServer, cfg Config) *Provider {
	t.Helper()
	cfg.BaseURL = s.URL + "/v1"
	cfg.API = APIResponses
	cfg.Backoff = func(int, time.Duration) time.Duration { return 0 }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResponsesToolTurnAndReplay: a reasoning summary streams as thinking, a
// function call becomes a tool use, and the reasoning item comes back in the
// next request verbatim (encrypted content included), after the call and
// before its output, as the API wants it.
func TestResponsesToolTurnAndReplay(t *testing.T) {
	s := newResponsesServer(t, toolTurn, textTurn)
	p := responsesProvider(t, s, Config{Model: "gpt-5.5"})
	var deltas []provider.Delta
	req := provider.Request{System: "be brief", Messages: []provider.Message{userText("read a.go")},
		Tools: []provider.ToolDef{{Name: "read", Description: "Read a file", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	resp, err := p.Stream(context.Background(), req, func(d provider.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	wantDeltas := []provider.Delta{{Type: provider.DeltaThinking, Text: "Look first."}, {Type: provider.DeltaThinking, Text: "\n\n"}, {Type: provider.DeltaThinking, Text: "Then read."}}
	if !reflect.DeepEqual(deltas, wantDeltas) {
		t.Errorf("deltas = %+v", deltas)
	}
	if resp.StopReason != provider.StopToolUse || resp.InputTokens != 42 || resp.OutputTokens != 7 || len(resp.Message.Parts) != 2 {
		t.Fatalf("response = %+v", resp)
	}
	th, call := resp.Message.Parts[0], resp.Message.Parts[1]
	if th.Type != provider.PartThinking || th.Text != "Look first.\n\nThen read." || !strings.HasPrefix(th.Signature, provider.OpenAIReasoning) ||
		!strings.Contains(th.Signature, "gAAAA-secret") {
		t.Errorf("thinking = %+v", th)
	}
	if call.Type != provider.PartToolUse || call.ID != "call_1" || call.Name != "read" || string(call.Args) != `{"path":"a.go"}` {
		t.Errorf("call = %+v", call)
	}

	first := s.body(t, 0)
	for key, want := range map[string]any{
		"model": "gpt-5.5", "instructions": "be brief", "store": false, "stream": true,
		"include":   []any{"reasoning.encrypted_content"},
		"reasoning": map[string]any{"summary": "auto"},
	} {
		if !reflect.DeepEqual(first[key], want) {
			t.Errorf("request %s = %#v, want %#v", key, first[key], want)
		}
	}
	if k, _ := first["prompt_cache_key"].(string); !strings.HasPrefix(k, "dsh-") {
		t.Errorf("prompt_cache_key = %v", first["prompt_cache_key"])
	}
	tools, _ := first["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["type"] != "function" || tools[0].(map[string]any)["strict"] != false {
		t.Errorf("tools = %v", first["tools"])
	}

	// The next turn replays the history as the log holds it.
	req.Messages = append(req.Messages, resp.Message, provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		{Type: provider.PartToolResult, ID: "call_1", Content: []card.Content{card.Text("package a")}}}})
	resp, err = p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != provider.StopEndTurn || resp.Message.Parts[0].Text != "Done." {
		t.Errorf("second response = %+v", resp)
	}
	second := s.body(t, 1)
	input, _ := json.Marshal(second["input"])
	want := `[{"content":"read a.go","role":"user"},` +
		`{"encrypted_content":"gAAAA-secret","id":"rs_1","summary":[{"text":"Look first.","type":"summary_text"},{"text":"Then read.","type":"summary_text"}],"type":"reasoning"},` +
		`{"arguments":"{\"path\":\"a.go\"}","call_id":"call_1","name":"read","type":"function_call"},` +
		`{"call_id":"call_1","output":"package a","type":"function_call_output"}]`
	if string(input) != want {
		t.Errorf("replayed input:\n%s\nwant\n%s", input, want)
	}
	if second["prompt_cache_key"] != first["prompt_cache_key"] {
		t.Errorf("the cache key changed between turns: %v, %v", first["prompt_cache_key"], second["prompt_cache_key"])
	}
}

// TestResponsesStops: the ways a response ends that the loop acts on.
func TestResponsesStops(t *testing.T) {
	for _, tc := range []struct {
		name    string
		turn    []string
		stop    provider.StopReason
		wantErr string
	}{
		{"cut by the token limit", []string{rEvent("response.incomplete", `,"response":`+rResponse("incomplete", "max_output_tokens", messageItem))}, provider.StopMaxTokens, ""},
		{"filtered", []string{rEvent("response.incomplete", `,"response":`+rResponse("incomplete", "content_filter"))}, provider.StopRefusal, ""},
		{"failed", []string{rEvent("response.failed", `,"response":{"id":"r","object":"response","status":"failed","output":[],"error":{"code":"invalid_prompt","message":"no"}}`)}, "", "openai: the response failed: invalid_prompt: no"},
		{"stream ends early", []string{rEvent("response.created", `,"response":`+rResponse("in_progress", ""))}, "", "the stream ended before the message was complete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newResponsesServer(t, tc.turn, tc.turn, tc.turn, tc.turn, tc.turn)
			p := responsesProvider(t, s, Config{Model: "o4-mini", MaxRetries: -1})
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || resp.StopReason != tc.stop {
				t.Fatalf("resp %+v err %v, want stop %s", resp, err, tc.stop)
			}
		})
	}
}

// TestDefaultAPI: OpenAI's reasoning models go through Responses on OpenAI's
// endpoint; everything else, and every other server, through Chat Completions.
func TestDefaultAPI(t *testing.T) {
	for _, tc := range []struct {
		model    string
		official bool
		want     string
	}{
		{"gpt-5.5", true, APIResponses},
		{"o3", true, APIResponses},
		{"o4-mini-2025-04-16", true, APIResponses},
		{"gpt-4.1", true, APIChat},
		{"gpt-5.5", false, APIChat},
		{"qwen3-coder", false, APIChat},
	} {
		if got := DefaultAPI(tc.model, tc.official); got != tc.want {
			t.Errorf("DefaultAPI(%q, %v) = %s, want %s", tc.model, tc.official, got, tc.want)
		}
	}
	if _, err := New(Config{APIKey: "k", API: "assistants"}); err == nil {
		t.Error("an unknown api was accepted")
	}
}
