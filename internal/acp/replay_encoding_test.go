package acp

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
)

// recordingPeer keeps every replayed notification.
type recordingPeer struct {
	encodingPeer
	notes []sdk.SessionNotification
}

func (p *recordingPeer) Replayed(n sdk.SessionNotification) error {
	p.notes = append(p.notes, n)
	return nil
}

// A replay's updates, encoded the way dsh writes them (read and search cards
// straight onto the line), are byte for byte the SDK's own marshalling of the
// same notifications, for every kind of update a mixed log replays.
func TestReplayEncodingIsTheSDKs(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	id := mixedLog(t, root, dir, 12)
	a := New(Options{SessionDir: dir})
	peer := &recordingPeer{}
	a.setPeer(peer)
	if _, err := a.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	cards := 0
	for i, n := range peer.notes {
		ours, err := rpcfix.EncodeNotification(n)
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		params, err := stdjson.Marshal(n)
		if err != nil {
			t.Fatalf("update %d: the SDK: %v", i, err)
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
		var kind struct {
			Update struct {
				Kind string `json:"sessionUpdate"`
				Meta struct {
					DSH struct {
						Card struct {
							Card string `json:"card"`
						} `json:"card"`
					} `json:"dsh"`
				} `json:"_meta"`
			} `json:"update"`
		}
		if err := stdjson.Unmarshal(params, &kind); err != nil {
			t.Fatal(err)
		}
		k := kind.Update.Kind
		if c := kind.Update.Meta.DSH.Card.Card; c != "" {
			k += "/" + c
		}
		kinds[k]++
		if u := n.Update.ToolCallUpdate; u != nil {
			if d, ok := u.Meta["dsh"].(map[string]any); ok {
				if c, ok := d["card"].(wireCard); ok {
					cards++
					// The bytes are those of the card encoded apart first.
					w, ok := c.r.HTMLSafeJSON()
					if !ok {
						t.Fatalf("update %d: card not encoded by hand", i)
					}
					apart := *u
					apart.Meta = map[string]any{"dsh": map[string]any{"card": rpcfix.WireJSON(w)}}
					before, err := rpcfix.EncodeNotification(sdk.SessionNotification{SessionId: n.SessionId, Update: sdk.SessionUpdate{ToolCallUpdate: &apart}})
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(ours, before) {
						t.Errorf("update %d: the card written onto the line differs from it encoded apart:\n%s\n%s", i, ours, before)
					}
				}
			}
		}
	}
	for _, k := range []string{"user_message_chunk", "session_info_update", "agent_message_chunk", "tool_call",
		"tool_call_update", "tool_call_update/read", "tool_call_update/search"} {
		if kinds[k] == 0 {
			t.Errorf("no %s update in the replay (got %v)", k, kinds)
		}
	}
	if want := kinds["tool_call_update/read"] + kinds["tool_call_update/search"]; cards != want {
		t.Errorf("%d cards written straight onto the line, want all %d", cards, want)
	}
}
