package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/provider"
)

// TestMCPToolsChanged: a server that changes its tools (tools/list_changed)
// has the new ones offered to the model from its next call, without a word
// to the user; a call of a tool it no longer offers is an error result that
// says so.
func TestMCPToolsChanged(t *testing.T) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "live", Version: "v0"}, nil)
	answer := func(text string) mcpsdk.ToolHandler {
		return func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, nil
		}
	}
	schema := map[string]any{"type": "object"}
	srv.AddTool(&mcpsdk.Tool{Name: "early", Description: "The first tool.", InputSchema: schema}, answer("early here"))
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil))
	t.Cleanup(web.Close)

	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "one"},
		{"tool_calls": [{"id": "c1", "name": "mcp__live__early", "args": {}}, {"id": "c2", "name": "mcp__live__late", "args": {}}]},
		{"text": "two"}]}`)
	var mu sync.Mutex
	var told []string
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "live", Type: "http", URL: web.URL}}
	o.MCPNotice = func(msg string) {
		mu.Lock()
		told = append(told, msg)
		mu.Unlock()
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Prompt(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	offered := func() []string {
		var names []string
		for _, d := range p.last(t).Tools {
			if strings.HasPrefix(d.Name, "mcp__") {
				names = append(names, d.Name)
			}
		}
		return names
	}
	fmt.Printf("first model call offers %q\n", offered())
	if got := offered(); len(got) != 1 || got[0] != "mcp__live__early" {
		t.Errorf("first call offers %q", got)
	}

	srv.AddTool(&mcpsdk.Tool{Name: "late", Description: "The tool that came later.", InputSchema: schema}, answer("late here"))
	srv.RemoveTools("early")
	// The registry follows the server's listing, which the notification starts.
	deadline := time.Now().Add(time.Minute)
	for {
		_, late := s.Registry().Get("mcp__live__late")
		_, early := s.Registry().Get("mcp__live__early")
		if late && !early {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry did not follow the server's tools: late %v, early %v", late, early)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if _, err := s.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("next model call offers %q\n", offered())
	if got := offered(); len(got) != 1 || got[0] != "mcp__live__late" {
		t.Errorf("the call after the change offers %q", got)
	}
	results := map[string]provider.Part{}
	for _, m := range p.last(t).Messages {
		for _, part := range m.Parts {
			if part.Type == provider.PartToolResult {
				results[part.ID] = part
			}
		}
	}
	for _, c := range []struct{ id, want string }{{"c1", `Unknown tool "mcp__live__early"`}, {"c2", "late here"}} {
		r, ok := results[c.id]
		text := ""
		if ok {
			for _, b := range r.Content {
				text += b.Text
			}
		}
		fmt.Printf("result of %s: %q (error %v)\n", c.id, text, r.IsError)
		if !ok || !strings.Contains(text, c.want) || r.IsError != (c.id == "c1") {
			t.Errorf("result of %s = %q (error %v), want %q", c.id, text, r.IsError, c.want)
		}
	}
	mu.Lock()
	if len(told) != 0 {
		t.Errorf("told the user %q about a change of tools", told)
	}
	mu.Unlock()
}
