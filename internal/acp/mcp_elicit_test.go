package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/session"
)

// signupServer has a tool that asks the user, by elicitation/create, for a
// form (name, and age with a default) and answers with what it got back.
func signupServer() *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "signup", Version: "v0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "register", Description: "Registers the user."},
		func(ctx context.Context, req *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcpsdk.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
				"type": "object", "required": []string{"name"},
				"properties": map[string]any{
					"name": map[string]any{"type": "string", "description": "your name"},
					"age":  map[string]any{"type": "integer", "default": 30},
				}}})
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "server got: " + res.Action + " " + string(b)}}}, nil, nil
		})
	return s
}

// TestMCPElicitationOverACP: an MCP server's elicitation/create, asked while
// its tool runs, reaches the editor as an elicitation form scoped to the
// call; what the user enters goes back to the server, the schema's default
// filled in.
func TestMCPElicitationOverACP(t *testing.T) {
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return signupServer() }, nil))
	t.Cleanup(web.Close)
	c := start(t, options{mode: "bypass", forms: true, script: script(t,
		turn{ToolCalls: []call{{ID: "r1", Name: "mcp__signup__register", Args: map[string]any{}}}},
		turn{Text: "Registered."})})
	c.elicit = func(_ context.Context, r sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse {
		content := map[string]any{"answer": "accept", "other": "name=Ada"}
		b, _ := json.Marshal(content)
		fmt.Printf("ACP client answers: accept %s\n", b)
		return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: content}}
	}
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "signup", Type: "http", Url: web.URL, Headers: []sdk.HttpHeader{}}}}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := resp.SessionId
	c.mustPrompt(id, "Register me.", sdk.StopReasonEndTurn)
	req := c.waitFor("the elicitation", func(l string) bool { return strings.Contains(l, `"method":"elicitation/create"`) })
	fmt.Printf("ACP client was shown: %s\n", req)
	if !strings.Contains(req, "Who are you?") || !strings.Contains(req, `"toolCallId":"r1"`) {
		t.Errorf("the elicitation does not ask the server's question for the call: %s", req)
	}
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var res string
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == "r1" {
			res = r.Result.TextOf()
		}
	}
	fmt.Printf("the model read: %q\n", res)
	if !strings.Contains(res, `server got: accept {"age":30,"name":"Ada"}`) {
		t.Errorf("the tool's result = %q, want the server to have got the form, with the default", res)
	}
}
