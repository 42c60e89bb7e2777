package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
)

// The blocks of a search as the Messages API streams them (the web search
// tool's documentation): the query streams as the server_tool_use block's
// input, the result arrives whole.
const (
	searchUseBlock = `{"type":"server_tool_use","id":"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE","name":"web_search","input":{}}`
	searchQuery    = `{"type":"input_json_delta","partial_json":"{\"query\": \"claude shannon birth date\"}"}`
	searchResults  = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE","content":[` +
		`{"type":"web_search_result","title":"Claude Shannon - Wikipedia","url":"https://en.wikipedia.org/wiki/Claude_Shannon","encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5","page_age":"April 30, 2025"},` +
		`{"type":"web_search_result","title":"Claude E. Shannon | IEEE","url":"https://www.ieee.org/shannon","encrypted_content":"Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm"}]}`
	searchError = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}`
)

func searchEvents(result string) []string {
	return append([]string{
		messageStart(10),
		blockStart(0, `{"type":"text","text":""}`),
		textDelta(0, "I'll search."),
		blockStop(0),
		blockStart(1, searchUseBlock),
		blockDelta(1, searchQuery),
		blockStop(1),
		blockStart(2, result),
		blockStop(2),
		blockStart(3, `{"type":"text","text":""}`),
		textDelta(3, "Born April 30, 1916."),
		blockStop(3),
	}, messageEnd("end_turn", 20)...)
}

func TestWebSearchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		result  string
		sources []provider.Source
	}{
		{"results", searchResults, []provider.Source{
			{URL: "https://en.wikipedia.org/wiki/Claude_Shannon", Title: "Claude Shannon - Wikipedia"},
			{URL: "https://www.ieee.org/shannon", Title: "Claude E. Shannon | IEEE"}}},
		{"error", searchError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(n int, w http.ResponseWriter) {
				if n == 0 {
					writeSSE(w, searchEvents(tc.result)...)
					return
				}
				writeSSE(w, simpleText("ok")...)
			})
			p := newProvider(t, s, Config{})
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("when was shannon born?")}, WebSearch: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tools := s.body(0)["tools"].([]any)
			want := map[string]any{"type": "web_search_20250305", "name": "web_search", "max_uses": float64(webSearchMaxUses)}
			if !reflect.DeepEqual(tools[len(tools)-1], want) {
				t.Errorf("tool %v, want %v", tools[len(tools)-1], want)
			}
			parts := resp.Message.Parts
			if len(parts) != 3 || parts[1].Type != provider.PartWebSearch {
				t.Fatalf("parts %+v, want text, search, text", parts)
			}
			got := parts[1]
			if got.ID != "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE" || got.Text != "claude shannon birth date" || !reflect.DeepEqual(got.Sources, tc.sources) {
				t.Errorf("search %+v", got)
			}
			if !strings.HasPrefix(got.Signature, WebSearchPrefix) {
				t.Errorf("signature %q", got.Signature)
			}

			// The next request sends both blocks back as they came, in place.
			_, err = p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("when was shannon born?"), resp.Message, userText("thanks")}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.body(1)["tools"]; ok {
				t.Errorf("search offered though the request did not ask: %v", s.body(1)["tools"])
			}
			content := s.body(1)["messages"].([]any)[1].(map[string]any)["content"].([]any)
			var wantUse, wantResult map[string]any
			_ = json.Unmarshal([]byte(`{"type":"server_tool_use","id":"srvtoolu_01WYG3ziw53XMcoyKL4XcZmE","name":"web_search","input":{"query":"claude shannon birth date"}}`), &wantUse)
			_ = json.Unmarshal([]byte(tc.result), &wantResult)
			if len(content) != 4 || !reflect.DeepEqual(content[1], wantUse) || !reflect.DeepEqual(content[2], wantResult) {
				t.Errorf("replayed %v\nwant the use %v\nand the result %v", content, wantUse, wantResult)
			}
		})
	}
}

// A search the stream holds no result of cannot be replayed (the API wants
// the pair): it is left out.
func TestWebSearchWithoutResultIsDropped(t *testing.T) {
	events := append([]string{
		messageStart(10),
		blockStart(0, searchUseBlock),
		blockDelta(0, searchQuery),
		blockStop(0),
	}, messageEnd("max_tokens", 20)...)
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, events...) })
	p := newProvider(t, s, Config{})
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("q")}, WebSearch: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.Parts) != 0 {
		t.Errorf("parts %+v, want none", resp.Message.Parts)
	}
}

// Another provider's search is not Claude's to replay.
func TestWebSearchOfAnotherProviderIsNotSent(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	p := newProvider(t, s, Config{})
	other := provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
		{Type: provider.PartWebSearch, ID: "ws_1", Text: "q", Signature: "openai-web-search:{}"},
		{Type: provider.PartText, Text: "found"}}}
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("q"), other, userText("and?")}}, nil); err != nil {
		t.Fatal(err)
	}
	content := s.body(0)["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["type"] != "text" {
		t.Errorf("sent %v, want only the text", content)
	}
}
