package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	scriptprov "github.com/dsh-dev/dsh/internal/provider/script"
)

// badCommands are built-in commands with bad arguments; the chat's test sends
// the same ones.
var badCommands = []struct{ name, args string }{
	{"model", "gpt-unknown"},
	{"model", "claude-haiku-4-5 lots"},
	{"mode", "sometimes"},
	{"mode", "auto"},
}

// hostReplies are the host's own answers to badCommands, from a session like
// the editor's (the built-in model list, no sandbox).
func hostReplies(t *testing.T) []string {
	t.Helper()
	p, err := scriptprov.Parse([]byte(`{"turns": [{"text": "unused"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: t.TempDir(), Model: "claude-sonnet-4-5",
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []string
	for _, c := range badCommands {
		r, err := s.Submit(context.Background(), host.Input{Text: "/" + c.name + " " + c.args, Where: host.Both})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Text)
	}
	return out
}

// A bad argument gets the host's reply, word for word: the editor only renders
// what the host's one validation said.
func TestCommandRepliesAreTheHosts(t *testing.T) {
	want := hostReplies(t)
	c := start(t, options{args: []string{"--model", "claude-sonnet-4-5"}, script: script(t, turn{Text: "unused"})})
	id := c.newSession()
	for i, bc := range badCommands {
		c.mustPrompt(id, "/"+bc.name+" "+bc.args, sdk.StopReasonEndTurn)
		b, _ := json.Marshal(want[i])
		quoted := strings.Trim(string(b), `"`)
		c.waitFor("the reply to /"+bc.name+" "+bc.args, func(l string) bool {
			return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, `"text":"`+quoted+`"`)
		})
	}
}
