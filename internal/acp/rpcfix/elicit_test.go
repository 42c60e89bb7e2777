package rpcfix

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/acp/acpschema"
)

// TestElicit: the request is ACP's elicitation/create (the schema says so),
// the client's answer comes back, and a request whose context ends is
// cancelled by its id.
func TestElicit(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := New(inR, outW, nil)
	c.Start()
	go func() { _, _ = io.Copy(io.Discard, c.Reader()) }()
	lines := bufio.NewScanner(outR)
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatal("nothing written")
		}
		return lines.Text()
	}
	e := Elicitation{SessionID: "s", ToolCallID: "q1", Message: "Which database?", Schema: FormSchema{Properties: map[string]Property{
		"answer": {Title: "Which database?", OneOf: []Option{{Const: "1", Title: "SQLite"}, {Const: "2", Title: "Postgres"}}},
		"other":  {Title: "Or in your own words"},
	}}}
	type result struct {
		r   Elicited
		err error
	}
	got := make(chan result, 1)
	go func() { r, err := c.Elicit(context.Background(), e); got <- result{r, err} }()
	req := next()
	answer := `{"jsonrpc":"2.0","id":"dsh-1","result":{"action":"accept","content":{"answer":"2"}}}`
	if _, errs := acpschema.Conversation([]string{req}, []string{answer}); len(errs) > 0 {
		t.Fatalf("%v", errs)
	}
	if !strings.Contains(req, `"method":"elicitation/create"`) || !strings.Contains(req, `"toolCallId":"q1"`) {
		t.Errorf("the request: %s", req)
	}
	if _, err := io.WriteString(inW, answer+"\n"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.r.Action != ActionAccept || r.r.Content["answer"] != "2" {
		t.Errorf("Elicit = %+v, %v", r.r, r.err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { r, err := c.Elicit(ctx, e); got <- result{r, err} }()
	req = next()
	cancel()
	cancelled := next()
	if _, errs := acpschema.Conversation([]string{req, cancelled}, nil); len(errs) > 0 {
		t.Fatalf("%v", errs)
	}
	if cancelled != `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"dsh-2"}}` {
		t.Errorf("after the context ended: %s", cancelled)
	}
	if r := <-got; !errors.Is(r.err, context.Canceled) {
		t.Errorf("a cancelled Elicit: %v", r.err)
	}
	_ = inW.Close()
}

// TestCancelRequestNamesPrompt: a session/prompt request reaches the SDK with
// its id in params._meta (the client's meta kept), and $/cancel_request
// naming it is reported; one naming another request, or none pending, is not.
func TestCancelRequestNamesPrompt(t *testing.T) {
	inR, inW := io.Pipe()
	c := New(inR, io.Discard, nil)
	reported := make(chan string, 4)
	c.OnCancel(func(id string) { reported <- id })
	c.Start()
	sdkIn := bufio.NewScanner(c.Reader())
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","prompt":[],"_meta":{"mine":1}}}`)
	if !sdkIn.Scan() {
		t.Fatal("nothing reached the SDK")
	}
	var got struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(sdkIn.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Params.Meta[RequestIDMeta] != "5" || got.Params.Meta["mine"] != 1.0 {
		t.Errorf("the prompt's meta reaching the SDK: %v", got.Params.Meta)
	}
	send(`{"jsonrpc":"2.0","id":6,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}`)
	sdkIn.Scan()
	for _, id := range []string{"6", "7", `"5"`, "5"} {
		send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + id + `}}`)
		sdkIn.Scan() // the SDK gets it too
	}
	if id := <-reported; id != "5" {
		t.Errorf("reported %s, want 5", id)
	}
	select {
	case id := <-reported:
		t.Errorf("also reported %s", id)
	default:
	}
	_ = inW.Close()
}
