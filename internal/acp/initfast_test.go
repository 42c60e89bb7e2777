package acp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// initialize answered before the SDK is the SDK's answer to the same
// request, byte for byte, and leaves the agent knowing the same of its client.
func TestInitializeFastIsTheSDKs(t *testing.T) {
	for name, params := range map[string]string{
		"bare":          `{"protocolVersion":1}`,
		"empty caps":    `{"protocolVersion":1,"clientCapabilities":{}}`,
		"zed":           `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"_meta":{"terminal_output":true,"terminal-auth":true}},"clientInfo":{"name":"zed","title":"Zed","version":"0.230.0"}}`,
		"auth terminal": `{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true},"fs":{"readTextFile":true}}}`,
		"read only":     `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false}}}`,
		"forms":         `{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{}}}}`,
		"url only":      `{"protocolVersion":1,"clientCapabilities":{"elicitation":{"url":{}}}}`,
		"meta not bool": `{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":"yes"}},"_meta":{"x":[1,{"y":null}]}}`,
		"newer version": `{"protocolVersion":7,"clientCapabilities":{"terminal":false}}`,
	} {
		for _, version := range []string{"1.2.3", "(devel)", "v0 <&> \u2028"} {
			t.Run(name+" "+version, func(t *testing.T) {
				fast := New(Options{Version: version})
				got, ok := fast.initializeFast(jsontext.Value(params))
				if !ok {
					t.Fatal("left to the SDK")
				}
				slow := New(Options{Version: version})
				var req sdk.InitializeRequest
				if err := json.Unmarshal([]byte(params), &req); err != nil {
					t.Fatal(err)
				}
				resp, err := slow.Initialize(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				want, err := json.Marshal(resp)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("answered\n%s\nthe SDK\n%s", got, want)
				}
				if fast.termMeta != slow.termMeta || fast.fs.ReadTextFile != slow.fs.ReadTextFile ||
					fast.fs.WriteTextFile != slow.fs.WriteTextFile || fast.fs.Meta != nil || fast.form != slow.form {
					t.Errorf("knows terminal_output %v, fs %+v, forms %v; Initialize %v, %+v, %v",
						fast.termMeta, fast.fs, fast.form, slow.termMeta, slow.fs, slow.form)
				}
			})
		}
	}
	// What it does not know the shape of goes to the SDK, which decides.
	for _, params := range []string{
		``, `null`, `[]`, `{}`, `{"protocolVersion":"1"}`, `{"protocolVersion":1.5}`,
		`{"protocolVersion":1,"unknown":true}`,
		`{"protocolVersion":1,"clientCapabilities":[]}`,
		`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"_meta":{}}}}`,
		`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":1}}}`,
		`{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":null}}}`,
		`{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{},"other":{}}}}`,
		`{"protocolVersion":1,"clientCapabilities":{"terminal":"yes"}}`,
		`{"protocolVersion":1,"clientCapabilities":{"newCapability":{}}}`,
		`{"protocolVersion":1,"clientInfo":{"name":"x","extra":1}}`,
	} {
		a := New(Options{Version: "1"})
		if got, ok := a.initializeFast(jsontext.Value(params)); ok {
			t.Errorf("%s: answered %s, want it left to the SDK", params, got)
		}
	}
}
