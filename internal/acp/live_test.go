package acp_test

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/control"
)

// TestNewSessionGoesLive: session/new is answered before the session's
// control socket is made, but by the time a prompt runs other clients can
// join it (dsh attach, the web page).
func TestNewSessionGoesLive(t *testing.T) {
	c := start(t, options{script: `{"turns": [{"text": "hi"}]}`})
	c.initialize(false)
	id := c.newSession()
	c.mustPrompt(id, "hello", sdk.StopReasonEndTurn)
	live, err := control.Attachable(c.sessionDir)
	if err != nil || !live[string(id)] {
		t.Fatalf("attachable sessions %v (%v), want the new one", live, err)
	}
	cl, err := control.DialSession(c.ctx(), c.sessionDir, string(id), control.DialOptions{From: "web"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Close() }()
	if cl.ID() != string(id) {
		t.Errorf("joined %q, want %q", cl.ID(), id)
	}
}
