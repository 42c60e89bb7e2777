package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestSessionSettings: a session's settings are its directory's (as dsh config
// prints them): the user's mode and model are in force, and what an untrusted
// project's file may not set is told in the thread when it opens.
func TestSessionSettings(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "dsh", "config.toml"), []byte("mode = \"read-only\"\nmodel = \"user-model\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".dsh", "config.toml"), []byte("thinking = \"max\"\ncontext_window = 2048\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{mode: "none", cwd: cwd, configHome: home, script: `{"turns": [{"echo_settings": true}]}`})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "read-only" {
		t.Errorf("modes = %+v, want read-only from the user's file", resp.Modes)
	}
	c.waitFor("the ignored thinking", func(l string) bool {
		return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, "thinking ignored")
	})
	c.waitFor("the ignored context window", func(l string) bool {
		return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, "context_window ignored")
	})
	c.mustPrompt(resp.SessionId, "settings?", sdk.StopReasonEndTurn)
	c.waitFor("the model in force", func(l string) bool { return strings.Contains(l, "model=user-model thinking= ") })
}
