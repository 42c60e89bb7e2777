package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/openai"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// OpenAI's encrypted reasoning, logged as the thinking's signature, comes
// back from the log: the agent restored from it sends the request the live
// agent sends, byte for byte, reasoning item included.
func TestResponsesReasoningSurvivesReload(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	ev := func(w io.Writer, typ, fields string) {
		fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":1%s}\n\n", typ, typ, fields)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		item := `{"type":"message","id":"msg","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}`
		if n == 0 {
			item = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look at a."}],"encrypted_content":"gAAAA-opaque"},` +
				`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"look","arguments":"{\"id\":\"a\"}","status":"completed"}`
		}
		ev(w, "response.completed", `,"response":{"id":"r","object":"response","status":"completed","output":[`+item+`],"usage":{"input_tokens":3,"output_tokens":2}}`)
	}))
	defer srv.Close()
	p, err := openai.New(openai.Config{APIKey: "k", BaseURL: srv.URL + "/v1", API: openai.APIResponses, Model: "gpt-5.5"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	pr := &probe{run: func(_ context.Context, name, id string) tool.Result { return tool.Text(name + " " + id) }}
	live := e.agent(p, tool.NewRegistry(pr.tools()...), ModeDefault, nil)
	if _, err := live.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	restored := e.agent(p, tool.NewRegistry(pr.tools()...), ModeDefault, nil)
	for _, r := range recs {
		restored.Fold(r)
	}
	if _, err := restored.Prompt(t.Context(), "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Prompt(t.Context(), "two"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 4 {
		t.Fatalf("%d requests, want 4", len(bodies))
	}
	if !bytes.Contains(bodies[2], []byte(`"encrypted_content":"gAAAA-opaque"`)) {
		t.Errorf("the restored request lost the reasoning item:\n%s", bodies[2])
	}
	if !bytes.Equal(bodies[2], bodies[3]) {
		t.Errorf("restored and live requests differ:\n%s\n%s", bodies[2], bodies[3])
	}
	if strings.Count(string(bodies[1]), `"type":"reasoning"`) != 1 {
		t.Errorf("the tool result's turn does not carry the reasoning back:\n%s", bodies[1])
	}
}
