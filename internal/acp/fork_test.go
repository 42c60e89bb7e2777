package acp_test

import (
	"errors"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestFork: session/fork copies the conversation into a new session that goes
// on apart — its next prompt is logged after the copied history, the source's
// log is left as it was — and an unknown session is the client's error. (The
// scripted model starts its script over in each session.)
func TestFork(t *testing.T) {
	c := start(t, options{script: script(t, turn{Text: "First answer."})})
	if c.init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Error("fork is not advertised")
	}
	src := c.newSession()
	c.mustPrompt(src, "first", sdk.StopReasonEndTurn)
	resp, err := c.conn.UnstableForkSession(c.ctx(), sdk.UnstableForkSessionRequest{SessionId: src, Cwd: c.cwd})
	if err != nil {
		t.Fatal(err)
	}
	fork := resp.SessionId
	if fork == src || resp.Modes == nil {
		t.Fatalf("fork answered %+v", resp)
	}
	c.announced(fork)
	c.mustPrompt(fork, "second", sdk.StopReasonEndTurn)
	texts := func(id sdk.SessionId) []string {
		var out []string
		for _, r := range records(t, c, id) {
			if r.Type == session.TypeUser || r.Type == session.TypeAssistant {
				out = append(out, r.Text)
			}
		}
		return out
	}
	if got := texts(src); len(got) != 2 || got[0] != "first" {
		t.Errorf("the source holds %q", got)
	}
	if got := texts(fork); len(got) != 4 || got[0] != "first" || got[1] != "First answer." || got[2] != "second" {
		t.Errorf("the fork holds %q", got)
	}
	_, err = c.conn.UnstableForkSession(c.ctx(), sdk.UnstableForkSessionRequest{SessionId: "nope", Cwd: c.cwd})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code == -32603 {
		t.Errorf("forking an unknown session: %v", err)
	}
}
