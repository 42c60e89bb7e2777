package acp_test

import (
	"github.com/dsh-dev/dsh/internal/attach"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestMCPPrompts: npm's reference "everything" server's prompts are slash
// commands (/mcp__SERVER__PROMPT, its arguments as the hint); one typed with
// its arguments becomes the prompt the server writes, and one missing a
// required argument says which.
func TestMCPPrompts(t *testing.T) {
	everything := npmBin(t, "mcp-server-everything")
	c := start(t, options{script: script(t, turn{Text: "Sunny."})})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: everything, Args: []string{"stdio"}, Env: []sdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	c.announced(id)
	c.mustPrompt(id, "/mcp__everything__args-prompt Paris Île-de-France", sdk.StopReasonEndTurn)
	if _, err := c.prompt(id, "/mcp__everything__args-prompt"); err == nil || !strings.Contains(err.Error(), "needs city") {
		t.Errorf("a missing argument: %v", err)
	}
	var hint string
	c.mu.Lock()
	for _, u := range c.updates {
		if a := u.Update.AvailableCommandsUpdate; a != nil {
			for _, cmd := range a.AvailableCommands {
				if cmd.Name == "mcp__everything__args-prompt" && cmd.Input != nil && cmd.Input.Unstructured != nil {
					hint = cmd.Input.Unstructured.Hint
				}
			}
		}
	}
	c.mu.Unlock()
	if hint != "city [state]" {
		t.Errorf("the prompt's command hint is %q", hint)
	}
	var users, sent []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser {
			users, sent = append(users, r.Text), append(sent, attach.ModelText(r.Text, r.Content))
		}
	}
	if len(users) != 1 || users[0] != "/mcp__everything__args-prompt Paris Île-de-France" ||
		!strings.HasPrefix(sent[0], "What's weather in Paris, Île-de-France?") {
		t.Errorf("prompts logged: %q, sent %q", users, sent)
	}
}
