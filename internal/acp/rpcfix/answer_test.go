package rpcfix

import (
	"io"
	"strings"
	"testing"

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
