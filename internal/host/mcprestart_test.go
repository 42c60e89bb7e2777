package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp"
)

// crashServerEnv makes the test binary a stdio MCP server whose one tool
// kills it.
const crashServerEnv = "DSH_HOST_TEST_CRASH_SERVER"

func crashServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "crasher", Version: "v0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Kills the server."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crasher: dying on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
}

// TestMCPServerRestartedOnce: a stdio server that dies is started again once,
// told to the user at once and to the model with the next prompt; its second
// death is final, and said to both.
func TestMCPServerRestartedOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "c1", "name": "mcp__fragile__crash", "args": {}}]}, {"text": "one"},
		{"tool_calls": [{"id": "c2", "name": "mcp__fragile__crash", "args": {}}]}, {"text": "two"},
		{"text": "three"}]}`)
	told := make(chan string, 4)
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "fragile", Type: "stdio", Command: exe, Args: []string{"-test.run=^$"},
		Env: map[string]string{crashServerEnv: "1"}}}
	o.MCPNotice = func(msg string) { told <- msg }
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	notice := func(want string) string {
		t.Helper()
		select {
		case msg := <-told:
			fmt.Printf("user notice: %s\n", msg)
			if !strings.Contains(msg, want) {
				t.Errorf("told the user %q, want %q", msg, want)
			}
			return msg
		case <-time.After(time.Minute):
			t.Fatalf("the user was not told %q", want)
			return ""
		}
	}
	// what the model reads as the user's prompt that starts with prompt
	modelNote := func(prompt, want string) {
		t.Helper()
		for _, m := range p.last(t).Messages {
			if len(m.Parts) > 0 && strings.HasPrefix(m.Parts[0].Text, prompt) {
				fmt.Printf("model reads: %q\n", m.Parts[0].Text)
				if !strings.Contains(m.Parts[0].Text, want) {
					t.Errorf("the model read %q, want %q", m.Parts[0].Text, want)
				}
				return
			}
		}
		t.Errorf("no prompt %q in the model's request", prompt)
	}

	if _, err := s.Prompt(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	notice("dying on purpose) and was started again")
	if _, err := s.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	modelNote("second", "and was started again")
	notice("MCP server fragile stopped for good")
	if _, err := s.Prompt(t.Context(), "third"); err != nil {
		t.Fatal(err)
	}
	modelNote("third", "stopped for good")
	if strings.Contains(p.last(t).Messages[len(p.last(t).Messages)-1].Parts[0].Text, "and was started again") {
		t.Error("the model was told the restart twice")
	}
}
