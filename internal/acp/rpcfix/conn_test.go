package rpcfix

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// countingWriter counts the writes that reach the client's stream.
type countingWriter struct {
	mu     sync.Mutex
	writes int
	buf    bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func (w *countingWriter) state() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes, w.buf.String()
}

func note(text string) sdk.SessionNotification {
	return sdk.SessionNotification{SessionId: "s", Update: sdk.UpdateAgentMessageText(text)}
}

// A replay's notifications leave together, not one write each; a live one,
// or any message of the SDK's, takes what waits with it, in order.
func TestReplayIsWrittenInBatches(t *testing.T) {
	out := &countingWriter{}
	c := New(strings.NewReader(""), out, nil)
	for i := range 1000 {
		if err := c.Buffer(note(strings.Repeat("x", i%50))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	writes, text := out.state()
	if lines := strings.Count(text, "\n"); lines != 1000 {
		t.Fatalf("%d lines written, want 1000", lines)
	}
	if writes > 10 {
		t.Errorf("1000 replayed notifications took %d writes, want a few batches", writes)
	}
	if err := c.Buffer(note("replayed")); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(note("live")); err != nil {
		t.Fatal(err)
	}
	_, text = out.state()
	if i, j := strings.Index(text, "replayed"), strings.Index(text, "live"); i < 0 || j < i {
		t.Errorf("a live notification did not take the waiting replay with it, in order")
	}
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":9,"result":{}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if _, text = out.state(); !strings.HasSuffix(text, `"id":9,"result":{}}`+"\n") {
		t.Errorf("the SDK's message was not written at once")
	}
}

// The owner hears of each response to a client's request once it is written,
// with the request's method and the result, and of nothing else.
func TestResponseWritten(t *testing.T) {
	inR, inW := io.Pipe()
	out := &countingWriter{}
	got := make(chan Response, 4)
	c := New(inR, out, func(r Response) {
		if _, text := out.state(); !strings.Contains(text, `"sessionId":"abc"`) {
			t.Error("told of a response before it was written")
		}
		got <- r
	})
	go func() { _, _ = io.Copy(io.Discard, c.Reader()) }() // the SDK
	c.Start()
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
		`{"jsonrpc":"2.0","id":"two","method":"session/prompt","params":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`,
	} {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitPending(t, c, 2)
	for _, l := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"abc"}}`, // not a response
		`{"jsonrpc":"2.0","id":7,"result":{}}`,                                     // answers nothing asked
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"abc"}}`,
		`{"jsonrpc":"2.0","id":"two","error":{"code":-32603,"message":"x"}}`,
	} {
		if _, err := c.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"session/new": `{"sessionId":"abc"}`, "session/prompt": ""}
	for range 2 {
		select {
		case r := <-got:
			w, ok := want[r.Method]
			if !ok || string(r.Result) != w {
				t.Errorf("told of %s with result %q", r.Method, r.Result)
			}
			delete(want, r.Method)
		case <-time.After(10 * time.Second):
			t.Fatal("no word of a written response")
		}
	}
	select {
	case r := <-got:
		t.Errorf("also told of %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	c.Drain(time.Second) // nothing pending: returns at once
	_ = inW.Close()
}

func waitPending(t *testing.T, c *Conn, n int) {
	t.Helper()
	for range 1000 {
		c.mu.Lock()
		got := len(c.pending)
		c.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the filter never saw %d requests", n)
}

// goneWriter is a client's stream once the client has gone.
type goneWriter struct{}

func (goneWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// An answer the client is gone before it gets waits for nothing: Drain, at
// exit, returns at once instead of waiting its whole time, and the owner is
// not told it was written.
func TestAnswerToAGoneClient(t *testing.T) {
	inR, inW := io.Pipe()
	told := make(chan Response, 1)
	c := New(inR, goneWriter{}, func(r Response) { told <- r })
	go func() { _, _ = io.Copy(io.Discard, c.Reader()) }() // the SDK
	c.Start()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitPending(t, c, 1)
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"abc"}}` + "\n")); err == nil {
		t.Fatal("the write to a gone client did not fail")
	}
	c.mu.Lock()
	left := len(c.pending)
	c.mu.Unlock()
	if left != 0 {
		t.Errorf("%d requests still wait for an answer that cannot be written", left)
	}
	select {
	case r := <-told:
		t.Errorf("told of %+v, which was never written", r)
	default:
	}
	_ = inW.Close()
}
