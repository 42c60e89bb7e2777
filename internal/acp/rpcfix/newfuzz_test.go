package rpcfix

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// session/new's result written by hand is the SDK's encoding of it whatever
// the session's id, modes and models hold: hostile Unicode, control
// characters, invalid UTF-8, huge strings. So is the commands update sent
// right after it.
func FuzzAppendNewSession(f *testing.F) {
	f.Add("20260101-000000-abc", "default", "Default", "Ask first", "claude-x", "Model <x>", "run", "a hint")
	f.Add(nasty, nasty, nasty, nasty, nasty, nasty, nasty, nasty)
	f.Add("\xff\xfe", "\u2028", "<&>", "\x00\x1f\x7f", "\xed\xa0\x80", "é\xc3", "\U0010FFFF", "\\\"")
	f.Fuzz(func(t *testing.T, id, mode, modeName, desc, model, modelName, cmd, hint string) {
		opts := sdk.SessionConfigSelectOptionsUngrouped{
			{Value: sdk.SessionConfigValueId(mode), Name: modeName, Description: &desc},
			{Value: sdk.SessionConfigValueId(model), Name: modelName},
		}
		r := sdk.NewSessionResponse{
			SessionId: sdk.SessionId(id),
			Modes: &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(mode), AvailableModes: []sdk.SessionMode{
				{Id: sdk.SessionModeId(mode), Name: modeName, Description: &desc}, {Id: sdk.SessionModeId(model), Name: modelName},
			}},
			ConfigOptions: []sdk.SessionConfigOption{
				{Select: &sdk.SessionConfigOptionSelect{Id: sdk.SessionConfigId(mode), Name: modeName, Type: "select",
					CurrentValue: sdk.SessionConfigValueId(model), Category: sdk.Ptr(sdk.SessionConfigOptionCategory(desc)),
					Description: &desc, Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}},
				{Select: &sdk.SessionConfigOptionSelect{Id: sdk.SessionConfigId(model), Name: id, Type: "select",
					CurrentValue: sdk.SessionConfigValueId(id), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}},
			},
		}
		got, ok := AppendNewSession(nil, r)
		if !ok {
			t.Fatal("left to the general way")
		}
		want, err := stdjson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("wrote\n%q\nthe SDK\n%q", got, want)
		}

		note := sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: sdk.SessionUpdate{
			AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: []sdk.AvailableCommand{
				{Name: cmd, Description: desc},
				{Name: mode, Description: modeName, Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: hint}}},
			}}}}
		fast, ok := appendFast(nil, note)
		if !ok {
			t.Fatal("commands left to the general way")
		}
		if want := general(t, note); !bytes.Equal(fast, want) {
			t.Fatalf("commands\n%q\nthe general way\n%q", fast, want)
		}
	})
}

// anyMessage is the SDK's reading of a message, copied from its
// connection.go apart from the layer's own copy.
type anyMessage struct {
	JSONRPC string              `json:"jsonrpc"`
	ID      *stdjson.RawMessage `json:"id,omitempty"`
	Method  string              `json:"method,omitempty"`
	Params  stdjson.RawMessage  `json:"params,omitempty"`
	Result  stdjson.RawMessage  `json:"result,omitempty"`
	Error   *sdk.RequestError   `json:"error,omitempty"`
}

// A request line the layer answers before the SDK is one the SDK reads as
// the same request: the same method, id and params bytes; and the id in the
// answer is written as the SDK writes it. A line it reads otherwise (or
// drops) is left to it.
func FuzzAnswerFirstReadsAsTheSDK(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":"a<b>\u2028","method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":null,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1e2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/a","mcpServers":[]},"params":{"cwd":"/b","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/a","mcpServers":[]},"Params":{"cwd":"/b","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]},"error":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/new","method":"session/prompt","params":{"cwd":"/w","mcpServers":[]}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\r\n") || check(line, false) != nil {
			return // not one line, or refused before any answer
		}
		_, method, ok := request(line)
		if !ok {
			return
		}
		id, params, ok := firstRequest(line, method)
		if !ok {
			return
		}
		var m anyMessage
		if err := stdjson.Unmarshal(line, &m); err != nil {
			t.Fatalf("%q taken, but the SDK drops it: %v", line, err)
		}
		if m.ID == nil || m.Method != method {
			t.Fatalf("%q taken as %s %s, the SDK reads %s %v", line, method, id, m.Method, m.ID)
		}
		if !bytes.Equal(params, m.Params) {
			t.Fatalf("%q: params %s, the SDK's %s", line, params, m.Params)
		}
		var b bytes.Buffer
		stdjson.HTMLEscape(&b, id)
		want, err := stdjson.Marshal(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("%q: answered id %s, the SDK's %s", line, b.Bytes(), want)
		}
	})
}
