package rpcfix

import (
	"bytes"
	stdjson "encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/acpschema"
)

// general is a notification's params encoded the general way.
func general(t testing.TB, note sdk.SessionNotification) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := appendGeneral(&b, note); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("}\n"))
}

// nasty holds every byte that JSON, HTML or JavaScript escaping treats apart,
// runes of every length, and invalid UTF-8.
var nasty = func() string {
	var b strings.Builder
	for c := range 0x80 {
		b.WriteByte(byte(c))
	}
	b.WriteString("é€😀\u2028\u2029\xff\xc3(\xe2\x82 end")
	return b.String()
}()

func fastCorpus() []sdk.SessionUpdate {
	code := "func main() {\n\tif a < b && c > d {\n\t\tfmt.Println(\"x\\n\")\n\t}\n}\n"
	raw := stdjson.RawMessage(`{ "path" : "a <b>.go",` + "\n\t" + `"x":[1, 2.50, 1e3, "\/\u00e9\"", true, null, {}] }`)
	card := stdjson.RawMessage(`{"kind":"read","lines":[{"number":1,"text":"if a < b && c > d { \"q\" }"},{"number":2,"text":"// é — € 😀 ` +
		"\u2028\u2029" + ` ok"}],"path":"/w/é.go"}`)
	old := "old <text>\n"
	return []sdk.SessionUpdate{
		sdk.UpdateUserMessageText("hi <there> & " + nasty),
		sdk.UpdateAgentMessageText("**bold** \u2028 ok"),
		sdk.UpdateAgentThoughtText(""),
		{AgentMessageChunk: &sdk.SessionUpdateAgentMessageChunk{Content: sdk.TextBlock("x"), MessageId: sdk.Ptr("m1")}},
		{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "c1", Title: "Read " + nasty, Kind: sdk.ToolKindRead,
			Status: sdk.ToolCallStatusPending, RawInput: raw,
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```go\n" + code + "```")),
				sdk.ToolDiffContent("/w/a.go", code, old), sdk.ToolDiffContent("/w/new.go", "new\n"), sdk.ToolTerminalRef("c1")},
			Locations: []sdk.ToolCallLocation{{Path: "/w/a.go", Line: sdk.Ptr(3)}, {Path: "/w/b.go"}},
			Meta:      map[string]any{"terminal_info": map[string]any{"terminal_id": "c1", "cwd": "/w"}}}},
		{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "c0", RawInput: stdjson.RawMessage(`{}`)}},
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c1", Status: sdk.Ptr(sdk.ToolCallStatusCompleted),
			Title: sdk.Ptr("Read a.go (lines 1-3)"), Kind: sdk.Ptr(sdk.ToolKindEdit),
			Content:   []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(code))},
			Locations: []sdk.ToolCallLocation{{Path: "/w/a.go", Line: sdk.Ptr(1)}},
			Meta:      map[string]any{"dsh": map[string]any{"card": card}}}},
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c1", Status: sdk.Ptr(sdk.ToolCallStatusCompleted),
			Meta: map[string]any{"dsh": map[string]any{"card": wireForm(card)}}}},
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c2", Meta: map[string]any{
			"terminal_exit":   map[string]any{"terminal_id": "c2", "exit_code": sdk.Ptr(0), "signal": nil},
			"terminal_output": map[string]any{"terminal_id": "c2", "data": "out\n" + nasty}}}},
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c3", Meta: map[string]any{
			"terminal_exit": map[string]any{"terminal_id": "c3", "exit_code": (*int)(nil), "signal": "SIGKILL", "n": -7}}}},
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c4", Status: sdk.Ptr(sdk.ToolCallStatusFailed), Title: sdk.Ptr("")}},
		{Plan: &sdk.SessionUpdatePlan{Entries: []sdk.PlanEntry{{Content: "do it <now>", Status: sdk.PlanEntryStatusInProgress, Priority: sdk.PlanEntryPriorityHigh},
			{Content: "then", Status: sdk.PlanEntryStatusPending, Priority: sdk.PlanEntryPriorityLow}}}},
		{Plan: &sdk.SessionUpdatePlan{Entries: []sdk.PlanEntry{}}},
		{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: []sdk.AvailableCommand{
			{Name: "mode", Description: "show or set the permission mode", Input: &sdk.AvailableCommandInput{
				Unstructured: &sdk.UnstructuredCommandInput{Hint: "[default|accept-edits|auto]"}}},
			{Name: "cost", Description: "tokens <used> & " + nasty},
			{Name: nasty, Description: "", Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: nasty}}},
		}}},
		{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: []sdk.AvailableCommand{}}},
		{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{Meta: map[string]any{"n": 1}, AvailableCommands: []sdk.AvailableCommand{{Name: "x"}}}},
	}
}

// The hand-written encoding is the general one, byte for byte, for every
// shape it takes on.
func TestFastEncodingIsTheGeneralOne(t *testing.T) {
	for i, u := range fastCorpus() {
		note := sdk.SessionNotification{SessionId: "s<1>", Update: u}
		got, ok := appendFast(nil, note)
		if !ok {
			t.Errorf("update %d: not taken by the fast path", i)
			continue
		}
		if want := general(t, note); !bytes.Equal(got, want) {
			t.Errorf("update %d:\nfast    %s\ngeneral %s", i, got, want)
		}
	}
}

// What the fast path does not know it leaves to the general way, and the line
// still comes out right.
func TestFastEncodingLeavesTheRest(t *testing.T) {
	others := []sdk.SessionNotification{
		{SessionId: "s", Meta: map[string]any{"a": 1}, Update: sdk.UpdateAgentMessageText("x")},
		{SessionId: "s", Update: sdk.UpdateUserMessage(sdk.ImageBlock("AAAA", "image/png"))},
		{SessionId: "s", Update: sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "c", RawInput: map[string]any{"a": 1}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "c", RawInput: stdjson.RawMessage("{\"a\":\"\xff\"}")}}},
		{SessionId: "s", Update: sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c", Meta: map[string]any{"x": 1.5}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c", Meta: map[string]any{"é": 1}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c",
			Locations: []sdk.ToolCallLocation{{Path: "/a", Meta: map[string]any{"k": "v"}}}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: "bypass"}}},
		{SessionId: "s", Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
			AvailableCommands: []sdk.AvailableCommand{{Name: "a", Meta: map[string]any{"k": "v"}}}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
			AvailableCommands: []sdk.AvailableCommand{{Name: "a", Input: &sdk.AvailableCommandInput{
				Unstructured: &sdk.UnstructuredCommandInput{Hint: "h", Meta: map[string]any{"k": "v"}}}}}}}},
		{SessionId: "s", Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{}}},
	}
	for i, note := range others {
		if _, ok := appendFast(nil, note); ok {
			t.Errorf("notification %d: taken by the fast path", i)
		}
		line, err := EncodeNotification(note)
		if err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
		want := `{"jsonrpc":"2.0","method":"session/update","params":` + string(general(t, note)) + "}\n"
		if string(line) != want {
			t.Errorf("notification %d:\ngot  %s\nwant %s", i, line, want)
		}
	}
}

func FuzzFastEncoding(f *testing.F) {
	f.Add("text <a> & b", `{"a": "b <c>"}`)
	f.Add(nasty, `[1, "\u2028", {"x" : null}]`)
	f.Add("é", "{\"é\": [\"— \u2028\u2029 😀\", \"\xff\"]}")
	f.Fuzz(func(t *testing.T, text, raw string) {
		if !stdjson.Valid([]byte(raw)) {
			return // dsh hands the encoder valid raw JSON only
		}
		note := sdk.SessionNotification{SessionId: sdk.SessionId(text), Update: sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
			ToolCallId: "c", Title: text, RawInput: stdjson.RawMessage(raw),
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}}}}
		if w, ok := appendRaw(nil, []byte(raw)); ok { // raw in the form WireJSON holds
			meta := sdk.SessionNotification{SessionId: "s", Update: sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{
				ToolCallId: "c", Meta: map[string]any{"dsh": map[string]any{"card": WireJSON(w)}}}}}
			if got, ok := appendFast(nil, meta); !ok || !bytes.Equal(got, general(t, meta)) {
				t.Errorf("WireJSON: fast (%v) %s\ngeneral %s", ok, got, general(t, meta))
			}
			meta.Update.ToolCallUpdate.Meta = map[string]any{"dsh": map[string]any{"card": appender{wire: w, raw: []byte(raw)}}}
			if got, ok := appendFast(nil, meta); !ok || !bytes.Equal(got, general(t, meta)) {
				t.Errorf("WireAppender: fast (%v) %s\ngeneral %s", ok, got, general(t, meta))
			}
		}
		got, ok := appendFast(nil, note)
		if !ok {
			return
		}
		if want := general(t, note); !bytes.Equal(got, want) {
			t.Errorf("fast    %s\ngeneral %s", got, want)
		}
	})
}

// appender is a WireAppender of raw JSON: wire is it in the form WireJSON holds.
type appender struct{ wire, raw []byte }

func (a appender) AppendWire(dst []byte) ([]byte, bool) { return append(dst, a.wire...), true }
func (a appender) MarshalJSON() ([]byte, error)         { return a.raw, nil }

// wireForm is raw JSON in the form WireJSON holds.
func wireForm(raw stdjson.RawMessage) WireJSON {
	w, ok := appendRaw(nil, raw)
	if !ok {
		panic("not raw JSON the fast path takes: " + string(raw))
	}
	return w
}

// What the layer writes of the updates dsh sends is ACP's session/update, as
// the schema has it.
func TestEncodedUpdatesMeetTheSchema(t *testing.T) {
	for i, u := range fastCorpus() {
		var b bytes.Buffer
		if err := appendNotification(&b, sdk.SessionNotification{SessionId: "s", Update: u}); err != nil {
			t.Fatal(err)
		}
		if _, err := acpschema.Message(acpschema.Agent, b.String(), nil); err != nil {
			t.Errorf("update %d: %v", i, err)
		}
	}
}
