package acp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// A model that stays overloaded (HTTP 529, through the Anthropic SDK) hands
// the turn to the fallback model, and the editor is told why, live and when
// the session is loaded again, as the terminal and the web page say it.
func TestFallbackModelIsSaid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct{ Model string }
		_ = json.Unmarshal(raw, &body)
		if body.Model == "claude-opus-4-1" {
			w.Header().Set("Retry-After-Ms", "1")
			w.WriteHeader(529)
			fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, strings.Join([]string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"answered"}}`,
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
			`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`,
			`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
		}, "\n\n")+"\n\n")
	}))
	defer srv.Close()
	o := options{noScript: true, sessionDir: t.TempDir(),
		args: []string{"--model", "claude-opus-4-1", "--fallback-model", "claude-haiku-4-5"},
		env:  []string{"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + srv.URL}}
	c := start(t, o)
	id := c.newSession()
	c.mustPrompt(id, "hello", sdk.StopReasonEndTurn)
	const why = "claude-opus-4-1 is overloaded or unavailable; going on with the fallback model claude-haiku-4-5"
	if live := strings.Join(c.transcript(0, id), "\n"); !strings.Contains(live, why) {
		t.Errorf("the editor was not told of the fallback:\n%s", live)
	}
	c.close()

	o.cwd = c.cwd
	again := start(t, o)
	from := again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if loaded := strings.Join(again.transcript(from, id), "\n"); !strings.Contains(loaded, why) {
		t.Errorf("session/load does not say it:\n%s", loaded)
	}
}
