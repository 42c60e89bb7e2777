package rpcfix

import (
	stdjson "encoding/json"
	"reflect"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/dsh-dev/dsh/internal/card"
)

// dsh's one-pass encoding of notifications is the SDK's encoding, value for
// value, for every kind of update the bridge sends.
func TestNotificationEncodingIsTheSDKs(t *testing.T) {
	diff := sdk.ToolDiffContent("/w/a.go", "new\n", "old\n")
	updates := []sdk.SessionUpdate{
		sdk.UpdateUserMessageText("hi <there>"),
		sdk.UpdateAgentMessageText("**bold** \u2028 ok"),
		sdk.UpdateAgentThoughtText("thinking"),
		{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "c1", Title: "Read a.go", Kind: sdk.ToolKindRead,
			Status: sdk.ToolCallStatusPending, RawInput: stdjson.RawMessage(`{"path":"a.go"}`),
			Content:   []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```go\nx\n```")), diff, sdk.ToolTerminalRef("c1")},
			Locations: []sdk.ToolCallLocation{{Path: "/w/a.go", Line: sdk.Ptr(3)}},
			Meta:      map[string]any{"dsh": map[string]any{"card": &card.ReadResult{Path: "a.go", Offset: 1, TotalLines: 1, Lines: []card.ReadLine{{Number: 1, Text: "x"}}}}}}},
		sdk.UpdateToolCall("c1", sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted), sdk.WithUpdateContent([]sdk.ToolCallContent{diff})),
		{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: "c2", Meta: map[string]any{"terminal_output": map[string]any{"terminal_id": "c2", "data": "out\n"}}}},
		{Plan: &sdk.SessionUpdatePlan{Entries: []sdk.PlanEntry{{Content: "do it", Status: sdk.PlanEntryStatusInProgress, Priority: sdk.PlanEntryPriorityHigh}}}},
		{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: "bypass"}},
	}
	for i, u := range updates {
		note := sdk.SessionNotification{SessionId: "s1", Update: u}
		ours, err := EncodeNotification(note)
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		params, err := stdjson.Marshal(note)
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := stdjson.Unmarshal(ours, &got); err != nil {
			t.Fatalf("update %d: %v\n%s", i, err, ours)
		}
		if err := stdjson.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"session/update","params":`+string(params)+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("update %d differs from the SDK's encoding (-sdk +dsh):\n%s", i, d)
		}
		if ours[len(ours)-1] != '\n' {
			t.Errorf("update %d: not one line", i)
		}
	}
	// Every variant the bridge uses was learnt, not left to the SDK's slow path.
	for _, typ := range []any{sdk.SessionUpdate{}, sdk.ToolCallContent{}, sdk.ContentBlock{}} {
		u, ok := unions.Load(reflect.TypeOf(typ))
		if !ok {
			t.Errorf("%T was never seen", typ)
			continue
		}
		un, isUnion := u.(union)
		if !isUnion {
			t.Errorf("%T is not known as a union", typ)
			continue
		}
		known := 0
		for _, v := range un.variants {
			if v.tagField >= 0 {
				known++
			}
		}
		if known == 0 {
			t.Errorf("%T: no variant learnt", typ)
		}
	}
}
