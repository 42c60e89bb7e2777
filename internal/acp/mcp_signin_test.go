package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp/mcptest"
	"github.com/dsh-dev/dsh/internal/session"
)

// greeter has the one tool the sign-in tests call once signed in.
func greeter() *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "v0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "greet", Description: "Greets."},
		func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "Hello from behind the sign-in"}}}, nil, nil
		})
	return s
}

// TestMCPSignInOverACP: an editor's MCP server that wants an OAuth sign-in
// does not hold up session/new; the editor is shown the link as a card (a
// finished tool call: "Sign in to MCP server remote", the link, waiting),
// the user follows it (here the test, as a browser would), a second card says
// it is done, and the model's next call runs the server's tool in the same
// session. No token reaches the log.
func TestMCPSignInOverACP(t *testing.T) {
	srv := mcptest.NewOAuthServer(t, greeter)
	c := start(t, options{mode: "bypass", script: script(t,
		turn{ToolCalls: []call{{ID: "g1", Name: "mcp__remote__greet", Args: map[string]any{}}}},
		turn{Text: "Greeted."})})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "remote", Type: "http", Url: srv.URL + "/mcp", Headers: []sdk.HttpHeader{}}}}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	card := func(state string) (title, text, result string) {
		line := c.waitFor("the sign-in card ("+state+")", func(l string) bool {
			return strings.Contains(l, `"tool_call"`) && strings.Contains(l, "Sign in to MCP server remote") &&
				(state != "waiting for you") == !strings.Contains(l, "/authorize?")
		})
		var msg struct {
			Params struct {
				Update struct {
					Title   string `json:"title"`
					Content []struct {
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		u := msg.Params.Update
		if len(u.Content) > 0 {
			text = u.Content[0].Content.Text
		}
		// The card's state is its finished update's.
		done := c.waitFor("the card's state", func(l string) bool {
			return strings.Contains(l, `"tool_call_update"`) && strings.Contains(l, state)
		})
		return u.Title, text, done
	}
	title, link, state := card("waiting for you")
	fmt.Printf("ACP client was shown: %q %q\n  then: %s\n", title, link, state)
	if !strings.HasPrefix(link, srv.URL+"/authorize?") {
		t.Fatalf("the card's link = %q", link)
	}
	page, err := mcptest.Follow(link)
	if err != nil || !strings.Contains(page, "Signed in to remote") {
		t.Fatalf("following the link: %q, %v", page, err)
	}
	_, _, state = card("signed in: its tools are ready")
	fmt.Printf("then: %s\n", state)

	c.mustPrompt(resp.SessionId, "Greet me.", sdk.StopReasonEndTurn)
	path := filepath.Join(c.sessionDir, string(resp.SessionId)+".jsonl")
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res string
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == "g1" {
			res = r.Result.TextOf()
		}
	}
	fmt.Printf("the tool after the sign-in: %q\n", res)
	if res != "Hello from behind the sign-in" {
		t.Errorf("the tool's result = %q", res)
	}
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "access-") || strings.Contains(string(log), "the-refresh") {
		t.Error("a token reached the log")
	}
}
