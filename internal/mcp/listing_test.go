package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListingCleaned: what a server names reaches no consumer raw: escapes
// and control characters go, descriptions are cut, and a prompt whose name
// cannot be a command is left out, told.
func TestListingCleaned(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "rude", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "t", Title: "\x1b[2JTitle\u202e", Description: "line one\nline two\x1b]0;owned\x07 " + strings.Repeat("y", 64<<10)},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	for _, name := range []string{"good", "bad\x1b[2J", strings.Repeat("n", 65)} {
		s.AddPrompt(&sdk.Prompt{Name: name, Description: "\x1b[31mred\x1b[0m prompt"},
			func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{}, nil
			})
	}
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	var notes []string
	servers := start(t, []ServerConfig{{Name: "rude", Type: "http", URL: srv.URL}},
		Options{Notice: func(_, msg string) { notes = append(notes, msg) }})
	tl := find(t, servers, "mcp__rude__t")
	d := tl.Description()
	if strings.ContainsAny(d, "\x1b\x07") || !strings.HasPrefix(d, "line one\nline two ") || len(d) > maxDescription+200 {
		t.Errorf("description = %q…", d[:min(len(d), 80)])
	}
	ps := servers.Prompts()
	if len(ps) != 1 || ps[0].Name != "good" || ps[0].Description != "red prompt" {
		t.Errorf("prompts = %+v", ps)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "its prompts: 2 were left out") {
		t.Errorf("notes = %q", notes)
	}
}
