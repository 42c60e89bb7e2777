package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// searchServer is a loopback Anthropic Messages API whose model searches the
// web when the request offers the search tool, in the shapes the web search
// tool's documentation gives, and otherwise says what it was sent: whether
// the tool was offered, and whether the history holds the search's blocks as
// they were sent (what a resumed session must send back).
func searchServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Tools []struct {
				Type string `json:"type"`
			} `json:"tools"`
			Messages []struct {
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(raw, &body)
		offered := false
		for _, tl := range body.Tools {
			offered = offered || tl.Type == "web_search_20250305"
		}
		events := []string{
			`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		}
		text := fmt.Sprintf("search offered: %v", offered)
		if len(body.Messages) > 1 {
			replayed := strings.Contains(string(raw), searchUse) && strings.Contains(string(raw), searchResult)
			text += fmt.Sprintf("; search replayed: %v", replayed)
		}
		i := 0
		if offered && len(body.Messages) == 1 {
			events = append(events,
				`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"claude shannon\"}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":`+searchResult+`}`,
				`{"type":"content_block_stop","index":1}`)
			i = 2
		}
		quoted, _ := json.Marshal(text)
		events = append(events,
			fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i),
			fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, quoted),
			fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i),
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
			`{"type":"message_stop"}`)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(e), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, e)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The search's blocks as the server sends them and a replay must send back.
const (
	searchUse    = `{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"claude shannon"}}`
	searchResult = `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[` +
		`{"type":"web_search_result","title":"Claude Shannon - Wikipedia","url":"https://en.wikipedia.org/wiki/Claude_Shannon","encrypted_content":"EqgfCioIARgB","page_age":"April 30, 2025"},` +
		`{"type":"web_search_result","title":"Claude E. Shannon | IEEE","url":"https://www.ieee.org/shannon","encrypted_content":"Eo8BCioIAhgB"}]}`
)
