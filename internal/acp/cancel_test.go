package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestQueuedPromptIsTold sends a second prompt while a turn waits for the
// user: it is queued, not refused — the client is told so — and runs when
// the turn ends, in order.
func TestQueuedPromptIsTold(t *testing.T) {
	c := start(t, options{mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "First done."},
		turn{Text: "Second done."},
	)})
	id := c.newSession()
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		// The first turn waits here until the second prompt is queued.
		c.waitFor("the queued notice", func(l string) bool { return strings.Contains(l, "Queued: this prompt runs") })
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	first := make(chan error, 1)
	go func() {
		got, err := c.prompt(id, "Write notes.")
		if err == nil && got != sdk.StopReasonEndTurn {
			err = errors.New("stopped with " + string(got))
		}
		first <- err
	}()
	c.waitFor("the permission request", func(l string) bool { return strings.Contains(l, `"session/request_permission"`) })
	c.mustPrompt(id, "And then this.", sdk.StopReasonEndTurn)
	if err := <-first; err != nil {
		t.Fatalf("the first prompt: %v", err)
	}
	var texts []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser || r.Type == session.TypeAssistant {
			texts = append(texts, r.Text)
		}
	}
	if got, want := strings.Join(texts, " | "), "Write notes. | First done. | And then this. | Second done."; got != want {
		t.Errorf("the log holds %q, want %q", got, want)
	}
	t.Logf("queued prompt: %s", strings.Join(texts, " | "))
}

// TestCancelRequest cancels requests by their JSON-RPC id with
// $/cancel_request: a prompt queued behind the running turn is dropped alone
// (the turn goes on); the running prompt's turn is cancelled, and with it the
// permission request it waited on, which dsh cancels by its id in turn.
func TestCancelRequest(t *testing.T) {
	c := start(t, options{mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "never reached"},
	)})
	id := c.newSession()
	asked := make(chan struct{})
	cancelled := make(chan error, 1)
	c.permitCtx = func(ctx context.Context, _ sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		close(asked)
		<-ctx.Done() // only dsh's $/cancel_request ends it
		cancelled <- ctx.Err()
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
	}
	// The SDK's client follows its own $/cancel_request with session/cancel,
	// which cancels everything: the test sends $/cancel_request alone.
	prompt := func(text string) <-chan sdk.StopReason {
		stop := make(chan sdk.StopReason, 1)
		go func() {
			got, err := c.prompt(id, text)
			if err != nil {
				t.Errorf("%s: %v", text, err)
			}
			stop <- got
		}()
		return stop
	}
	running := prompt("Write notes.")
	<-asked
	queued := prompt("Queued one.")
	c.waitFor("the queued notice", func(l string) bool { return strings.Contains(l, "Queued: this prompt runs") })

	queuedID := c.requestID("session/prompt", "Queued one.")
	c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + queuedID + `}}`)
	if got := <-queued; got != sdk.StopReasonCancelled {
		t.Errorf("the queued prompt stopped %q, want cancelled", got)
	}
	select {
	case err := <-cancelled:
		t.Fatalf("cancelling the queued prompt cancelled the running turn's permission request: %v", err)
	default:
	}

	runningID := c.requestID("session/prompt", "Write notes.")
	c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + runningID + `}}`)
	if got := <-running; got != sdk.StopReasonCancelled {
		t.Errorf("the running prompt stopped %q, want cancelled", got)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("the permission request's context: %v", err)
	}
	permission := c.outRequestID("session/request_permission")
	c.waitFor("dsh's $/cancel_request of the permission request", func(l string) bool {
		return strings.Contains(l, `"method":"$/cancel_request"`) && strings.Contains(l, `"requestId":`+permission+`}`)
	})
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write ran after its turn was cancelled: %v", err)
	}
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser && r.Text == "Queued one." {
			t.Error("the cancelled queued prompt was logged")
		}
	}
	t.Logf("$/cancel_request: queued prompt %s and running prompt %s answered cancelled; dsh cancelled permission request %s", queuedID, runningID, permission)
}

// send writes a message of the client's that the SDK does not send as it is.
func (c *client) send(msg string) {
	c.t.Helper()
	if _, err := c.stdin.Write([]byte(msg + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

// requestID is the id of the client's request method whose line holds text
// (waited for: the line reaches dsh before the test's record of it).
func (c *client) requestID(method, text string) string {
	c.t.Helper()
	l, ok := c.in.wait(exitWait, func(l string) bool {
		return strings.Contains(l, `"method":"`+method+`"`) && strings.Contains(l, text)
	})
	if !ok {
		c.t.Fatalf("the client sent no %s with %q", method, text)
	}
	var m struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		c.t.Fatal(err)
	}
	return string(m.ID)
}

// outRequestID is the id of dsh's last request of method.
func (c *client) outRequestID(method string) string {
	c.t.Helper()
	id := ""
	for _, l := range c.out.all() {
		if strings.Contains(l, `"method":"`+method+`"`) {
			var m struct{ ID json.RawMessage }
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				c.t.Fatal(err)
			}
			id = string(m.ID)
		}
	}
	if id == "" {
		c.t.Fatalf("dsh sent no %s", method)
	}
	return id
}
