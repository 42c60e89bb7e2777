package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
)

// The output of a searching turn as the Responses API documents it: a
// web_search_call item (its sources, as include asks), then the answer with
// url_citation annotations.
const (
	searchCallItem = `{"type":"web_search_call","id":"ws_67c9fa05","status":"completed","action":{"type":"search","query":"positive news today","sources":[{"type":"url","url":"https://apnews.com/a"}]}}`
	citedItem      = `{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Good news.","annotations":[` +
		`{"type":"url_citation","start_index":0,"end_index":10,"url":"https://apnews.com/a","title":"AP News"},` +
		`{"type":"url_citation","start_index":0,"end_index":10,"url":"https://bbc.com/b","title":"BBC"}]}]}`
)

var searchTurn = []string{
	rEvent("response.created", `,"response":`+rResponse("in_progress", "")),
	rEvent("response.output_item.added", `,"output_index":0,"item":{"type":"web_search_call","id":"ws_67c9fa05","status":"in_progress"}`),
	rEvent("response.web_search_call.in_progress", `,"item_id":"ws_67c9fa05","output_index":0`),
	rEvent("response.web_search_call.searching", `,"item_id":"ws_67c9fa05","output_index":0`),
	rEvent("response.web_search_call.completed", `,"item_id":"ws_67c9fa05","output_index":0`),
	rEvent("response.output_item.done", `,"output_index":0,"item":`+searchCallItem),
	rEvent("response.output_item.added", `,"output_index":1,"item":{"type":"message","id":"msg_2","role":"assistant","status":"in_progress","content":[]}`),
	rEvent("response.output_text.delta", `,"item_id":"msg_2","output_index":1,"content_index":0,"delta":"Good news."`),
	rEvent("response.output_item.done", `,"output_index":1,"item":`+citedItem),
	rEvent("response.completed", `,"response":`+rResponse("completed", "", searchCallItem, citedItem)),
}

// TestResponsesWebSearch: the search tool is offered when asked, its call
// becomes a search part whose sources are the action's and the citations',
// and the next request sends the item back verbatim.
func TestResponsesWebSearch(t *testing.T) {
	s := newResponsesServer(t, searchTurn, textTurn)
	p := responsesProvider(t, s, Config{Model: "gpt-5.5"})
	req := provider.Request{Messages: []provider.Message{userText("news?")}, WebSearch: true}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := s.body(t, 0)
	if tools := first["tools"]; !reflect.DeepEqual(tools, []any{map[string]any{"type": "web_search"}}) {
		t.Errorf("tools = %v", tools)
	}
	if inc := first["include"]; !reflect.DeepEqual(inc, []any{"reasoning.encrypted_content", "web_search_call.action.sources"}) {
		t.Errorf("include = %v", inc)
	}
	if len(resp.Message.Parts) != 2 {
		t.Fatalf("parts = %+v", resp.Message.Parts)
	}
	got := resp.Message.Parts[0]
	want := provider.Part{Type: provider.PartWebSearch, ID: "ws_67c9fa05", Name: "web_search", Text: "positive news today",
		Signature: WebSearchPrefix + searchCallItem,
		Sources:   []provider.Source{{URL: "https://apnews.com/a", Title: "AP News"}, {URL: "https://bbc.com/b", Title: "BBC"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("search = %+v\nwant %+v", got, want)
	}

	req = provider.Request{Messages: []provider.Message{userText("news?"), resp.Message, userText("more")}}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	second := s.body(t, 1)
	if _, ok := second["tools"]; ok {
		t.Errorf("search offered though the request did not ask: %v", second["tools"])
	}
	var wantItem any
	_ = json.Unmarshal([]byte(searchCallItem), &wantItem)
	if input := second["input"].([]any); len(input) != 4 || !reflect.DeepEqual(input[1], wantItem) {
		t.Errorf("replayed input = %v\nwant the search item %v second", input, wantItem)
	}
}

// An Anthropic search is not the Responses API's to send.
func TestResponsesSkipsAnotherProvidersSearch(t *testing.T) {
	s := newResponsesServer(t, textTurn)
	p := responsesProvider(t, s, Config{Model: "gpt-5.5"})
	other := provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
		{Type: provider.PartWebSearch, ID: "srvtoolu_1", Signature: "anthropic-web-search:[]"}, {Type: provider.PartText, Text: "found"}}}
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("q"), other, userText("and?")}}, nil); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(s.body(t, 0)["input"])
	if want := `[{"content":"q","role":"user"},{"content":"found","role":"assistant"},{"content":"and?","role":"user"}]`; string(input) != want {
		t.Errorf("input = %s\nwant %s", input, want)
	}
}

// Chat Completions has no server-side search: asking for one offers nothing.
func TestChatOffersNoWebSearch(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	p := newProvider(t, s, Config{Model: "gpt-4.1"})
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("q")}, WebSearch: true}, nil); err != nil {
		t.Fatal(err)
	}
	if tools, ok := s.body(0)["tools"]; ok {
		t.Errorf("tools = %v, want none", tools)
	}
}
