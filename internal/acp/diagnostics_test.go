package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// TestDiffDiagnostics: an edit's result with diagnostics sends its diff, then
// the diagnostics as text, and the card (with them) under _meta.dsh.card.
func TestDiffDiagnostics(t *testing.T) {
	b := bridgeFor(false)
	call := rec(session.TypeToolCall, "e1")
	call.Name, call.Args = "edit", jsontext.Value(`{"path":"m.go","old_string":"return 1","new_string":"return \"one\""}`)
	b.updates(call, false)
	r := rec(session.TypeToolResult, "e1")
	r.Result = &tool.Result{Content: []card.Content{card.Text("Edited m.go")}, Meta: jsontext.Value(
		`{"path":"m.go","created":false,"sites":1,"hunks":[{"oldStart":4,"oldLines":1,"newStart":4,"newLines":1,` +
			`"oldText":"\treturn 1\n","newText":"\treturn \"one\"\n"}],"diagnostics":[{"path":"m.go","line":4,"column":9,` +
			`"severity":"error","message":"cannot use \"one\" as int value","source":"compiler"}]}`)}
	us := b.updates(r, false)
	got := encode(t, us[len(us)-1])
	var u struct {
		Content []struct {
			Type    string `json:"type"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"content"`
		Meta struct {
			Dsh struct {
				Card json.RawMessage `json:"card"`
			} `json:"dsh"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(got), &u); err != nil {
		t.Fatal(err)
	}
	if len(u.Content) != 2 || u.Content[0].Type != "diff" || !strings.Contains(u.Content[1].Content.Text, "`m.go:4:9` error: cannot use") {
		t.Fatalf("content = %s", got)
	}
	c, err := card.DecodeResult(u.Meta.Dsh.Card)
	if d, ok := c.(*card.DiffResult); err != nil || !ok || len(d.Diagnostics) != 1 || d.Diagnostics[0].Line != 4 {
		t.Errorf("_meta.dsh.card: %v %s", err, u.Meta.Dsh.Card)
	}
}
