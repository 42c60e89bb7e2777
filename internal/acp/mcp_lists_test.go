package acp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPPromptsChangedOverACP: an MCP server that changes its prompts
// (prompts/list_changed) while the session is open has the editor's
// commands follow at once: a new available_commands_update offers the new
// prompt's command and no longer the old one.
func TestMCPPromptsChangedOverACP(t *testing.T) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "live", Version: "v0"}, nil)
	prompt := func(name string) (*mcpsdk.Prompt, mcpsdk.PromptHandler) {
		return &mcpsdk.Prompt{Name: name, Description: "The " + name + " prompt."},
			func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
				return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: name}}}}, nil
			}
	}
	srv.AddPrompt(prompt("early"))
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil))
	t.Cleanup(web.Close)
	c := start(t, options{mode: "bypass", script: script(t, turn{Text: "ok"})})
	if _, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "live", Type: "http", Url: web.URL, Headers: []sdk.HttpHeader{}}}}}); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	first := c.waitFor("the commands", func(l string) bool { return strings.Contains(l, `"available_commands_update"`) })
	if !strings.Contains(first, `"mcp__live__early"`) {
		t.Fatalf("the first commands lack the server's prompt: %s", first)
	}
	srv.AddPrompt(prompt("late"))
	srv.RemovePrompts("early")
	next := c.waitFor("the changed commands", func(l string) bool {
		return strings.Contains(l, `"available_commands_update"`) && strings.Contains(l, `"mcp__live__late"`) && !strings.Contains(l, `"mcp__live__early"`)
	})
	t.Logf("after the change: %.300s…", next)
}
