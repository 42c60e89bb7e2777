package acp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/session"
)

type greetArgs struct {
	Name string `json:"name"`
}

// testMCPServer is the Go MCP server the tests give dsh: over stdio (this test
// binary, started by dsh) and over HTTP (in the test process).
func testMCPServer() *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "dsh-acp-test", Version: "v0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "greet", Description: "Greets someone.", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, a greetArgs) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "Hello, " + a.Name + "!"}}}, nil, nil
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "shout", Description: "Shouts (it acts, so dsh asks)."},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, a greetArgs) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: strings.ToUpper(a.Name) + "!"}}}, nil, nil
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "crash", Description: "Kills the server."},
		func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}

// runTestMCPServer serves testMCPServer on stdio, after writing its pid where
// DSH_ACP_TEST_MCP_PID says.
func runTestMCPServer() int {
	if p := os.Getenv("DSH_ACP_TEST_MCP_PID"); p != "" {
		if err := os.WriteFile(p, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return 1
		}
	}
	if err := testMCPServer().Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test MCP server:", err)
		return 1
	}
	return 0
}

// stdioServer is a session/new stdio server running this test binary.
func stdioServer(t *testing.T, name, pidFile string) sdk.McpServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []sdk.EnvVariable{{Name: "DSH_ACP_TEST_MCP", Value: "1"}}
	if pidFile != "" {
		env = append(env, sdk.EnvVariable{Name: "DSH_ACP_TEST_MCP_PID", Value: pidFile})
	}
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: env}}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the stdio MCP server never started: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestMCPServers gives a session MCP servers four ways — stdio and HTTP from
// the client, stdio from the user's config file, and one that cannot start —
// and has the model call their tools: only the trusted server's read-only tool
// runs unasked; the broken server is reported to the user and to the model; closing
// the session leaves no server process.
func TestMCPServers(t *testing.T) {
	web := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return testMCPServer() }, nil))
	// Closed after dsh (cleanups run last first): Close waits for dsh's open
	// stream, which a test failing before session/close leaves open until dsh
	// is gone, so a deferred Close would wait forever.
	t.Cleanup(web.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cfgPid := filepath.Join(t.TempDir(), "cfg.pid")
	toml := fmt.Sprintf("[mcp.cfg]\ncommand = %q\nargs = [\"-test.run=^$\"]\ntrusted = true\nenv = { DSH_ACP_TEST_MCP = \"1\", DSH_ACP_TEST_MCP_PID = %q }\n", exe, cfgPid)
	if err := os.MkdirAll(filepath.Join(home, "dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "dsh", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{mode: "default", configHome: home, script: script(t,
		turn{Text: "Asking every server.", ToolCalls: []call{
			{ID: "m1", Name: "mcp__go__greet", Args: map[string]any{"name": "Zed"}},
			{ID: "m2", Name: "mcp__go__shout", Args: map[string]any{"name": "hey"}},
			{ID: "m3", Name: "mcp__web__greet", Args: map[string]any{"name": "web"}},
			{ID: "m4", Name: "mcp__cfg__greet", Args: map[string]any{"name": "config"}},
		}},
		turn{Text: "All servers answered."})})
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	goPid := filepath.Join(t.TempDir(), "go.pid")
	from := c.mark()
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		stdioServer(t, "go", goPid),
		{Http: &sdk.McpServerHttpInline{Name: "web", Type: "http", Url: web.URL, Headers: []sdk.HttpHeader{}}},
		{Stdio: &sdk.McpServerStdio{Name: "broken", Command: "/nonexistent/mcp-server", Args: []string{}, Env: []sdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := resp.SessionId
	c.waitFor("the note about the broken server", func(l string) bool { return strings.Contains(l, "MCP server broken") })
	c.mustPrompt(id, "Use the tools.", sdk.StopReasonEndTurn)
	golden(t, "mcp", c.transcript(from, id))

	c.mu.Lock()
	asked := len(c.asked)
	c.mu.Unlock()
	// Hints are believed only from servers the user's config trusts: the
	// editor's servers' calls are all asked, the trusted cfg's read-only greet
	// is not.
	if asked != 3 {
		t.Errorf("dsh asked %d times, want 3 (go's greet and shout, web's greet; cfg is trusted and greet is read-only)", asked)
	}
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == session.TypeUser && !strings.Contains(r.Text, "MCP server broken") {
			t.Errorf("the model was not told about the broken server: %q", r.Text)
		}
		if r.Type == session.TypeToolResult && (r.Result == nil || r.Result.IsError) {
			t.Errorf("call %s failed: %+v", r.CallID, r.Result)
		}
	}

	pids := []int{readPid(t, goPid), readPid(t, cfgPid)}
	if _, err := c.conn.CloseSession(c.ctx(), sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	for _, pid := range pids {
		proctest.GroupGone(t, pid) // each stdio server runs in a process group of its own
	}
}

// TestMCPServerDies: a server that dies mid-session is started again once,
// told to the user at once and to the model with the next prompt; its second
// death is final, said to both, and its tools then fail with a reason.
func TestMCPServerDies(t *testing.T) {
	c := start(t, options{script: script(t,
		turn{ToolCalls: []call{{ID: "c1", Name: "mcp__go__crash", Args: map[string]any{}}}},
		turn{Text: "It crashed."},
		turn{ToolCalls: []call{{ID: "c2", Name: "mcp__go__greet", Args: map[string]any{"name": "again"}}}},
		turn{ToolCalls: []call{{ID: "c3", Name: "mcp__go__crash", Args: map[string]any{}}}},
		turn{Text: "It crashed again."},
		turn{ToolCalls: []call{{ID: "c4", Name: "mcp__go__greet", Args: map[string]any{"name": "anyone"}}}},
		turn{Text: "Still gone."})})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{stdioServer(t, "go", "")}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := resp.SessionId
	c.mustPrompt(id, "Crash it.", sdk.StopReasonEndTurn)
	c.waitFor("the note about the restarted server", func(l string) bool {
		return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, "was started again")
	})
	c.mustPrompt(id, "Greet, then crash it.", sdk.StopReasonEndTurn)
	c.waitFor("the note about the dead server", func(l string) bool {
		return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, "MCP server go stopped for good")
	})
	c.mustPrompt(id, "Greet.", sdk.StopReasonEndTurn)
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	var results []string
	for _, r := range recs {
		switch r.Type { //nolint:exhaustive // only what the test checks
		case session.TypeUser:
			prompts = append(prompts, r.Text)
		case session.TypeToolResult:
			results = append(results, r.Result.TextOf())
		}
	}
	if len(prompts) != 3 || strings.Contains(prompts[0], "stopped") || !strings.Contains(prompts[1], "was started again") ||
		!strings.Contains(prompts[2], "MCP server go stopped for good") {
		t.Errorf("prompts = %q: want the second to tell the model the server was restarted, the third that it is gone", prompts)
	}
	if len(results) != 4 || results[1] != "Hello, again!" || !strings.Contains(results[3], "not running") {
		t.Errorf("results = %q: want the call after the restart to work, the one after the second crash to say the server is not running", results)
	}
}
