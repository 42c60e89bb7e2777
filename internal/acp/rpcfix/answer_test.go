package rpcfix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// A request AnswerFirst's function answers never reaches the SDK, and its
// response is written and reported as the SDK's are; one it declines, and
// any other method, go to the SDK as they came.
func TestAnswerFirst(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"two","method":"initialize","params":{"decline":true}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"initialize"}`,
	}, "\n") + "\n"
	out := &countingWriter{}
	written := make(chan Response, 4)
	c := New(strings.NewReader(in), out, func(r Response) { written <- r })
	var seen []string
	c.AnswerFirst("initialize", func(params jsontext.Value) ([]byte, bool) {
		seen = append(seen, string(params))
		if strings.Contains(string(params), "decline") {
			return nil, false
		}
		return []byte(`{"protocolVersion":1}`), true
	})
	c.Start()
	sdkSaw, err := io.ReadAll(c.Reader())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":"two","method":"initialize","params":{"decline":true}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/"}}` + "\n"
	if string(sdkSaw) != want {
		t.Errorf("the SDK read\n%s\nwant\n%s", sdkSaw, want)
	}
	if got := strings.Join(seen, " "); got != `{"protocolVersion":1} {"decline":true} ` {
		t.Errorf("the function was offered params %q", got)
	}
	_, text := out.state()
	wantOut := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}` + "\n" + `{"jsonrpc":"2.0","id":4,"result":{"protocolVersion":1}}` + "\n"
	if text != wantOut {
		t.Errorf("written\n%s\nwant\n%s", text, wantOut)
	}
	for range 2 {
		if r := <-written; r.Method != "initialize" || string(r.Result) != `{"protocolVersion":1}` {
			t.Errorf("reported %+v, want initialize's result", r)
		}
	}
}

// A request AnswerLater's function takes is answered on a goroutine of its
// own: the connection reads on (a later request reaches the SDK before the
// answer is written). Its error is sent as the SDK sends a handler's, its id
// written as the SDK writes ids.
func TestAnswerLater(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"<1>","method":"session/new","params":{"cwd":"/"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"fail":true}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"decline":true}}`,
	}, "\n") + "\n"
	out := &countingWriter{}
	written := make(chan Response, 2)
	c := New(strings.NewReader(in), out, func(r Response) { written <- r })
	release := make(chan struct{})
	c.AnswerLater("session/new", func(params jsontext.Value) (func() ([]byte, error), bool) {
		switch {
		case strings.Contains(string(params), "decline"):
			return nil, false
		case strings.Contains(string(params), "fail"):
			return func() ([]byte, error) {
				<-release
				return nil, sdk.NewInvalidParams(map[string]any{"error": "no <such> dir"})
			}, true
		}
		return func() ([]byte, error) {
			<-release
			return []byte(`{"sessionId":"s"}`), nil
		}, true
	})
	c.Start()
	sdkSaw, err := io.ReadAll(c.Reader()) // the reader is not held up by the answers
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"decline":true}}` + "\n"; string(sdkSaw) != want {
		t.Errorf("the SDK read\n%s\nwant\n%s", sdkSaw, want)
	}
	if _, text := out.state(); text != "" {
		t.Errorf("answered before the answers were ready: %s", text)
	}
	close(release)
	got := map[string]bool{}
	for range 2 {
		r := <-written
		got[r.Method+" "+string(r.Result)] = true
	}
	if !got[`session/new {"sessionId":"s"}`] || !got["session/new "] {
		t.Errorf("reported %v, want the result and the error", got)
	}
	_, text := out.state()
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":"\u003c1\u003e","result":{"sessionId":"s"}}` + "\n",
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"error":"no \u003csuch\u003e dir"}}}` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("written\n%s\nwant it to hold\n%s", text, want)
		}
	}
}

// An answer's error becomes the response's error as the SDK's toReqErr makes
// it: a RequestError as it is, a cancellation as such, anything else (a
// wrapped RequestError too) an internal error.
func TestRequestError(t *testing.T) {
	invalid := sdk.NewInvalidParams(map[string]any{"error": "bad"})
	for _, c := range []struct {
		err  error
		code int
	}{
		{invalid, -32602},
		{fmt.Errorf("open: %w", invalid), -32603},
		{fmt.Errorf("stop: %w", context.Canceled), -32800},
		{errors.New("disk full"), -32603},
	} {
		if got := requestError(c.err); got.Code != c.code {
			t.Errorf("%v: code %d, want %d", c.err, got.Code, c.code)
		}
	}
}

// BeforeSDK's function runs once, before the first message that goes to the
// SDK: not for one answered first, not again after.
func TestBeforeSDK(t *testing.T) {
	in, client := io.Pipe()
	answered := make(chan Response, 1)
	c := New(in, &countingWriter{}, func(r Response) { answered <- r })
	c.AnswerFirst("initialize", func(jsontext.Value) ([]byte, bool) { return []byte(`{}`), true })
	made := make(chan struct{})
	c.BeforeSDK(func() { close(made) }) // a second call would panic
	c.Start()
	send := func(line string) {
		if _, err := client.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	<-answered
	select {
	case <-made:
		t.Fatal("the SDK was set up for a message answered first")
	default:
	}
	go func() {
		send(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`)
		send(`{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}`)
		_ = client.Close()
	}()
	r := bufio.NewReader(c.Reader())
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-made:
	default:
		t.Fatal("the SDK read a message before it was set up")
	}
	if !strings.Contains(line, `"id":2`) {
		t.Errorf("the SDK read first %s", line)
	}
	if rest, err := io.ReadAll(r); err != nil || !strings.Contains(string(rest), `"id":3`) {
		t.Errorf("the SDK read then %q (%v)", rest, err)
	}
	<-c.Gone()
}
