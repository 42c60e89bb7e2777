package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// askingServer has a tool that asks the user for a form (name, age, with
// defaults) or a URL, and answers with what it got back.
func askingServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v0"}, nil)
	type args struct {
		URL bool `json:"url,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "ask", Description: "Asks the user."},
		func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			p := &sdk.ElicitParams{Message: "Who are you?\x1b[2J", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{
					"name": map[string]any{"type": "string", "default": "Ann"},
					"age":  map[string]any{"type": "integer", "default": 30, "description": "in years"},
				}}}
			if a.URL {
				p = &sdk.ElicitParams{Mode: "url", Message: "Authorise the app", URL: "https://example.test/approve",
					ElicitationID: "e1"}
			}
			res, err := req.Session.Elicit(ctx, p)
			if err != nil {
				return nil, nil, err
			}
			b, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(b)}}}, nil, nil
		})
	return s
}

// TestElicitation: a server's question reaches the user as the running
// call's question, and the answer goes back as the specification has it.
func TestElicitation(t *testing.T) {
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return askingServer() }, nil))
	t.Cleanup(srv.Close)
	s := start(t, []ServerConfig{{Name: "asker", Type: "http", URL: srv.URL}}, Options{})
	ask := find(t, s, "mcp__asker__ask")
	for _, tc := range []struct {
		name   string
		args   string
		answer *card.Answer // nil: no one can be asked
		want   string       // the tool's result: the server's view
	}{
		{"defaults", `{}`, &card.Answer{ID: "accept", Text: "Accept"}, `accept {"age":30,"name":"Ann"}`},
		{"values", `{}`, &card.Answer{Text: "name=Bo\nage=41"}, `accept {"age":41,"name":"Bo"}`},
		{"json", `{}`, &card.Answer{Text: `{"name":"Cy"}`}, `accept {"age":30,"name":"Cy"}`},
		{"decline", `{}`, &card.Answer{ID: "decline", Text: "Decline"}, `decline null`},
		{"dismissed", `{}`, &card.Answer{}, `cancel null`},
		{"bad value", `{}`, &card.Answer{Text: "age=old"}, `cancel null`},
		{"no one to ask", `{}`, nil, `decline null`},
		{"url", `{"url":true}`, &card.Answer{ID: "accept", Text: "Done"}, `accept null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []tool.Question
			var logged strings.Builder
			env := tool.Env{Progress: func(c string) { logged.WriteString(c) }}
			if tc.answer != nil {
				env.Ask = func(_ context.Context, q tool.Question) (card.Answer, error) {
					asked = append(asked, q)
					return *tc.answer, nil
				}
			}
			r, err := ask.Run(context.Background(), env, []byte(tc.args), nil)
			if err != nil || r.IsError || r.TextOf() != tc.want {
				t.Fatalf("result = %+v, %v; want %q", r, err, tc.want)
			}
			if tc.answer == nil {
				return
			}
			if len(asked) != 1 {
				t.Fatalf("asked %d times", len(asked))
			}
			q := asked[0]
			if strings.ContainsRune(q.Text, '\x1b') || !strings.HasPrefix(q.Text, "MCP server asker asks") {
				t.Errorf("question = %q", q.Text)
			}
			if tc.name == "url" && (!strings.Contains(q.Text, "https://example.test/approve") || q.FreeText) {
				t.Errorf("url question = %+v", q)
			}
			if tc.name == "defaults" && (!strings.Contains(q.Text, "- age (integer, default 30) in years") || !q.FreeText) {
				t.Errorf("form question = %q", q.Text)
			}
			if !strings.Contains(logged.String(), "[asker asked: ") {
				t.Errorf("the answer was not logged with the call: %q", logged.String())
			}
		})
	}
}
