package host

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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

	// The registry follows the server's listing, which the notification
	// starts; the status says when it did. Two notifications may come
	// (one per change), so wait until the last change is in.
	listed := watchListed(t, s)
	srv.AddTool(&mcpsdk.Tool{Name: "late", Description: "The tool that came later.", InputSchema: schema}, answer("late here"))
	srv.RemoveTools("early")
	listed(func() bool {
		_, late := s.Registry().Get("mcp__live__late")
		_, early := s.Registry().Get("mcp__live__early")
		return late && !early
	})

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

// watchListed follows s's status; the function it returns waits until a
// status whose MCPListed grew leaves ok true (a minute at most).
func watchListed(t *testing.T, s *Session) func(ok func() bool) {
	t.Helper()
	grew := make(chan struct{}, 64)
	var last uint64
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindStatus && e.Status.MCPListed > last {
			last = e.Status.MCPListed
			grew <- struct{}{}
		}
	})
	t.Cleanup(sub.Close)
	return func(ok func() bool) {
		t.Helper()
		timeout := time.After(time.Minute)
		for !ok() {
			select {
			case <-grew:
			case <-timeout:
				t.Fatal("the session's status did not say the MCP server's listings changed")
			}
		}
	}
}

// TestMCPListsChanged: a server that changes its prompts and its resources
// (prompts/list_changed, resources/list_changed) has the session's commands
// and resources follow, and the status says so, so that consumers keeping
// them (the chat's table and @ completion, ACP's available commands) list
// them again.
func TestMCPListsChanged(t *testing.T) {
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "live", Version: "v0"}, nil)
	prompt := func(name string) (*mcpsdk.Prompt, mcpsdk.PromptHandler) {
		return &mcpsdk.Prompt{Name: name, Description: "The " + name + " prompt."},
			func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
				return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: name}}}}, nil
			}
	}
	resource := func(uri string) (*mcpsdk.Resource, mcpsdk.ResourceHandler) {
		return &mcpsdk.Resource{URI: uri, Name: uri},
			func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
				return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, Text: uri}}}, nil
			}
	}
	srv.AddPrompt(prompt("early"))
	srv.AddResource(resource("mem://early"))
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil))
	t.Cleanup(web.Close)

	o := options(t, t.TempDir(), t.TempDir(), scripted(t, `{"turns": [{"text": "one"}]}`))
	o.MCP = []mcp.ServerConfig{{Name: "live", Type: "http", URL: web.URL}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	commands := func() []string {
		var out []string
		for _, c := range s.CommandsFor(Terminal) {
			if strings.HasPrefix(c.Name, promptPrefix) {
				out = append(out, c.Name)
			}
		}
		return out
	}
	resources := func() []string {
		rs, err := s.Resources(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.URI)
		}
		return out
	}
	fmt.Printf("before: commands %q, resources %q, listed %d\n", commands(), resources(), s.Status().MCPListed)
	if got := commands(); !slices.Equal(got, []string{"mcp__live__early"}) {
		t.Fatalf("commands before = %q", got)
	}

	listed := watchListed(t, s)
	srv.AddPrompt(prompt("late"))
	srv.RemovePrompts("early")
	listed(func() bool { return slices.Equal(commands(), []string{"mcp__live__late"}) })
	before := s.Status().MCPListed
	srv.AddResource(resource("mem://late"))
	listed(func() bool { return s.Status().MCPListed > before })
	fmt.Printf("after: commands %q, resources %q, listed %d\n", commands(), resources(), s.Status().MCPListed)
	if got := resources(); !slices.Equal(got, []string{"mem://early", "mem://late"}) {
		t.Errorf("resources after = %q", got)
	}
}
