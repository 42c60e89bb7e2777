package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestDeleteSession deletes through session/delete: a session open in this
// dsh is closed first and its log removed, so it neither lists nor loads; one
// open in another dsh process is refused and stays; an unknown id is named.
func TestDeleteSession(t *testing.T) {
	sessions := evenDir(t)
	c := start(t, options{sessionDir: sessions, script: script(t, turn{Text: "One."}, turn{Text: "Two."})})
	if c.init.AgentCapabilities.SessionCapabilities.Delete == nil {
		t.Error("initialize: the session/delete capability is not advertised")
	}
	gone := c.newSession()
	c.mustPrompt(gone, "Delete me", sdk.StopReasonEndTurn)
	kept := c.newSession()
	c.mustPrompt(kept, "Keep me", sdk.StopReasonEndTurn)

	if _, err := c.conn.UnstableDeleteSession(c.ctx(), sdk.UnstableDeleteSessionRequest{SessionId: gone}); err != nil {
		t.Fatalf("session/delete of an open session: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sessions, string(gone)+".jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session's log: %v", err)
	}
	list, err := c.conn.ListSessions(c.ctx(), sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != kept {
		t.Errorf("session/list after the delete = %+v, want %s alone", list.Sessions, kept)
	}
	_, err = c.prompt(gone, "Still there?")
	wantCode(t, "a prompt to the deleted session", err, -32002)
	_, err = c.conn.LoadSession(c.ctx(), sdk.LoadSessionRequest{SessionId: gone, Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	wantCode(t, "session/load of the deleted session", err, -32002)
	_, err = c.conn.UnstableDeleteSession(c.ctx(), sdk.UnstableDeleteSessionRequest{SessionId: gone})
	wantCode(t, "session/delete of the deleted session", err, -32002)
	t.Logf("session/delete %s: its log is gone, session/list holds %d session, session/load and a second delete: %v", gone, len(list.Sessions), err)

	// Another dsh has the kept session open: its log is that process's.
	if _, err := c.conn.CloseSession(c.ctx(), sdk.CloseSessionRequest{SessionId: kept}); err != nil {
		t.Fatal(err)
	}
	other := start(t, options{sessionDir: sessions, cwd: c.cwd, script: script(t, turn{Text: "Three."})})
	if _, err := other.conn.LoadSession(other.ctx(), sdk.LoadSessionRequest{SessionId: kept, Cwd: c.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load in the other dsh: %v", err)
	}
	_, err = c.conn.UnstableDeleteSession(c.ctx(), sdk.UnstableDeleteSessionRequest{SessionId: kept})
	wantCode(t, "session/delete of a session another dsh has open", err, -32603)
	t.Logf("session/delete of a session open elsewhere: %v", err)
	if _, err := os.Stat(filepath.Join(sessions, string(kept)+".jsonl")); err != nil {
		t.Errorf("the refused delete removed the log: %v", err)
	}
	other.mustPrompt(kept, "Still mine", sdk.StopReasonEndTurn)
}

func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
	}
}
