package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestAdditionalDirectories: the directories a client adds to a session are
// in its reach like the workspace — read and edited there — while a path in
// none of them is still refused; the user and the model are told; a relative
// or missing directory is the client's error.
func TestAdditionalDirectories(t *testing.T) {
	real := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	extra, outside := real(t.TempDir()), real(t.TempDir())
	lib := filepath.Join(extra, "lib.txt")
	if err := os.WriteFile(lib, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("no\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{script: script(t,
		turn{ToolCalls: []call{{ID: "r1", Name: "read", Args: map[string]any{"path": lib}}}},
		turn{ToolCalls: []call{{ID: "e1", Name: "edit", Args: map[string]any{"path": lib, "old_string": "old", "new_string": "new"}},
			{ID: "r2", Name: "read", Args: map[string]any{"path": secret}}}},
		turn{Text: "Done."})})
	for _, dirs := range [][]string{{"relative"}, {filepath.Join(extra, "missing")}} {
		_, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}, AdditionalDirectories: dirs})
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("additionalDirectories %v: %v, want invalid params", dirs, err)
		}
	}
	if c.init.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Error("the capability is not advertised")
	}
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}, AdditionalDirectories: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	c.announced(id)
	c.mustPrompt(id, "Change the library.", sdk.StopReasonEndTurn)
	if b, _ := os.ReadFile(lib); string(b) != "new\n" {
		t.Errorf("lib.txt is %q", b)
	}
	var user, r2 string
	for _, r := range records(t, c, id) {
		switch {
		case r.Type == "user":
			user = r.Text
		case r.Type == "tool_result" && r.CallID == "r2":
			r2 = r.Result.TextOf()
		case r.Type == "tool_result" && r.Result.IsError:
			t.Errorf("%s failed: %s", r.CallID, r.Result.TextOf())
		}
	}
	if !strings.Contains(r2, "outside the workspace") {
		t.Errorf("a file in no root was read: %q", r2)
	}
	if !strings.Contains(user, "files may be read and changed in: "+extra) {
		t.Errorf("the model was not told: %q", user)
	}
	var told bool
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.updates {
		if u.Update.AgentMessageChunk != nil && u.Update.AgentMessageChunk.Content.Text != nil &&
			strings.Contains(u.Update.AgentMessageChunk.Content.Text.Text, "dsh may also read and change files in: "+extra) {
			told = true
		}
	}
	if !told {
		t.Error("the user was not told")
	}
}
