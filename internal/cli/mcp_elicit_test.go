package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
			text := "server got: " + res.Action
			if res.Content != nil {
				b, _ := json.Marshal(res.Content)
				text += " " + string(b)
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, nil, nil
		})
	return s
}

// TestMCPElicitationScripts runs testdata/mcpelicit: dsh run (the binary, as
// testscript runs it) with a config naming a loopback MCP server whose tool
// asks the user a form.
func TestMCPElicitationScripts(t *testing.T) {
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return signupServer() }, nil))
	t.Cleanup(web.Close)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/mcpelicit",
		Setup: func(e *testscript.Env) error {
			e.Setenv("XDG_STATE_HOME", e.WorkDir+"/state")
			e.Setenv("XDG_CONFIG_HOME", e.WorkDir+"/xdg")
			e.Setenv("NO_COLOR", "1")
			e.Setenv("HOME", e.WorkDir+"/home")
			cfg := filepath.Join(e.WorkDir, "xdg", "dsh", "config.toml")
			if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
				return err
			}
			return os.WriteFile(cfg, []byte("[mcp.signup]\ntype = \"http\"\nurl = \""+web.URL+"\"\n"), 0o644)
		},
	})
}
