package acp

import (
	stdjson "encoding/json"
	"reflect"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// newSessionShapes are session/new params as editors send them, and shapes
// near them the fast path must leave to the SDK.
var newSessionShapes = []string{
	`{"cwd":"/home/u/src/app","mcpServers":[]}`,
	`{"cwd":"/home/u/src/app","mcpServers":[{"name":"fs","command":"/usr/bin/mcp-fs","args":["--root","/w"],"env":[{"name":"TOKEN","value":"x"}]}]}`,
	`{"cwd":"/w","mcpServers":[{"type":"http","name":"h","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}]}`,
	`{"cwd":"/w","mcpServers":[{"type":"sse","name":"s","url":"http://127.0.0.1:9/sse","headers":[]}]}`,
	`{"cwd":"/w","mcpServers":[{"type":"stdio","name":"x","command":"c","args":[],"env":[]}]}`,
	`{"cwd":"/w","mcpServers":[{"type":"acp","name":"a","id":"q"}]}`,
	`{"cwd":"/w","mcpServers":[],"additionalDirectories":["/a","/b"],"_meta":{"zed":{"v":1.5,"k":[true,null,"\u2028"]}}}`,
	`{ "_meta" : {} , "cwd" : "C:\\Users\\u" , "mcpServers" : [ ] }`,
	`{"cwd":"/w\u00e9\ud83d\ude00","mcpServers":[],"additionalDirectories":[null]}`,
	`{"cwd":"/w","mcpServers":[null]}`,
	`{"cwd":"/w","mcpServers":[{}]}`,
	`{"cwd":"/w","mcpServers":[{"name":"n","command":"c","args":null,"env":null}]}`,
	`{"Cwd":"/w","mcpServers":[]}`,
	`{"cwd":"/w","mcpServers":[],"_meta":{"a":1e400}}`,
	`{"cwd":"/w","mcpServers":[],"_meta":{"a":1,"a":2}}`,
	"{\"cwd\":\"/w\xff\",\"mcpServers\":[]}",
	`{"cwd":"/w","mcpServers":[]} `,
	`{"cwd":"/w","mcpServers":[]}{}`,
}

// What the fast path reads of session/new's params is what the SDK decodes
// of the same bytes and passes its Validate; anything else it leaves to the
// SDK. The seeds run in every go test; -fuzz explores from them.
func FuzzNewSessionParams(f *testing.F) {
	for _, s := range newSessionShapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		p, ok := newSessionParams(jsontext.Value(params))
		if !ok {
			return
		}
		var want sdk.NewSessionRequest
		if err := stdjson.Unmarshal(params, &want); err != nil {
			t.Fatalf("read %#v from %q, the SDK fails: %v", p, params, err)
		}
		if err := want.Validate(); err != nil {
			t.Fatalf("read %#v from %q, the SDK refuses it: %v", p, params, err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("from %q read\n%#v\nthe SDK\n%#v", params, p, want)
		}
	})
}
