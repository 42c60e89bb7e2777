package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp/mcptest"
)

// remoteServer is an MCP server behind a sign-in: greet answers, and
// register asks the user for a form (elicitation/create) and says what it
// got.
func remoteServer() *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "v0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "greet", Description: "Greets."},
		func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "Hello from behind the sign-in"}}}, nil, nil
		})
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

// TestMCPSignInInTmux drives the real binary in tmux at 120×40 against a
// local OAuth test server: the chat shows the sign-in card with its link at
// once; the test reads the link off the screen and follows it, as a
// browser would; the card says signed in; the server's tool then runs in the
// same session. Then the server's elicitation is asked in the chat's
// question box (its first line the box's title, the form's fields under it)
// and answered in the user's words; the server gets the form, its default
// filled in. The replay shows the same, and no token.
func TestMCPSignInInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := mcptest.NewOAuthServer(t, remoteServer)
	script := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"tool_calls": [{"id": "g1", "name": "mcp__remote__greet", "args": {}}]},
		{"text": "Greeted."},
		{"tool_calls": [{"id": "r1", "name": "mcp__remote__register", "args": {}}]},
		{"text": "Registered."}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, config := filepath.Join(tmp, "ws"), filepath.Join(tmp, "config")
	for _, d := range []string{ws, filepath.Join(config, "dsh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(config, "dsh", "config.toml"),
		[]byte(fmt.Sprintf("[mcp.remote]\nurl = %q\n", srv.URL+"/mcp")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "XDG_CONFIG_HOME=" + config,
		"HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color"}
	socket := fmt.Sprintf("dsh-mcp-%d-%s", os.Getpid(), filepath.Base(tmp))
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	// -J joins the rows tmux wrapped, so a long link reads whole.
	screen := func() string { return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "chat") }
	waitFor := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if m := re.FindStringSubmatch(s); m != nil {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s (%s); the screen:\n%s", what, re, s)
			}
			time.Sleep(50 * time.Millisecond) // tmux has no signal for a changed pane
		}
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "chat"}, k...)...) }
	cmd := fmt.Sprintf("cd %s && env %s %s --color never --mode bypass --provider script --script %s; echo \"dsh exited $?\"; sleep 600",
		ws, strings.Join(env, " "), bin, script)
	tmux("new-session", "-d", "-s", "chat", "-x", "120", "-y", "40", cmd)

	// The card's body wraps the link at the pane's width (with colour it is
	// one OSC 8 hyperlink still): its rows, joined.
	m := waitFor("the sign-in card", regexp.MustCompile(`● Sign in to MCP server remote\n((?: +\S+\n)+?) +waiting for you.*`))
	link := strings.Join(strings.Fields(m[1]), "")
	t.Logf("the chat shows:\n%s", m[0])
	if !strings.HasPrefix(link, srv.URL+"/authorize?") {
		t.Fatalf("the card's link = %q", link)
	}
	if page, err := mcptest.Follow(link); err != nil || !strings.Contains(page, "Signed in to remote") {
		t.Fatalf("following the link: %q, %v", page, err)
	}
	m = waitFor("the card signed in", regexp.MustCompile(`● Sign in to MCP server remote\n\s+signed in: its tools are ready`))
	t.Logf("then:\n%s", m[0])

	waitFor("the input", regexp.MustCompile(`Ask dsh`))
	keys("-l", "greet me")
	keys("Enter")
	m = waitFor("the tool's answer", regexp.MustCompile(`(?m)^● remote: greet\n[\s\S]*?Hello from behind the sign-in[\s\S]*Greeted\.`))
	t.Logf("the tool ran:\n%s", m[0])

	keys("-l", "register me")
	keys("Enter")
	m = waitFor("the server's question", regexp.MustCompile(`(?m)^╭─ MCP server remote asks: Who are you\? ─+╮\n│ - age \(integer, default 30\)[\s\S]*\z`))
	t.Logf("the question:\n%s", strings.TrimRight(m[0], "\n "))
	time.Sleep(2 * permGrace) // a deliberate key: one at once is typing ahead
	keys("-l", "name=Ada")
	waitFor("the answer typed", regexp.MustCompile(`your answer: name=Ada`))
	keys("Enter")
	m = waitFor("the server's answer", regexp.MustCompile(`(?m)^● remote: register\n[\s\S]*?server got: accept \{"age":30,"name":"Ada"\}[\s\S]*Registered\.`))
	t.Logf("the elicitation answered:\n%s", m[0])

	keys("-l", "/exit")
	keys("Enter")
	m = waitFor("dsh to exit", regexp.MustCompile(`session (\S+) — go on with[\s\S]*dsh exited 0`))
	rp := exec.Command(bin, "replay", "--color", "never", m[1])
	rp.Dir, rp.Env = ws, append(os.Environ(), env...)
	out, err := rp.Output()
	if err != nil {
		t.Fatalf("dsh replay: %v", err)
	}
	for _, want := range []string{"● Sign in to MCP server remote", "signed in: its tools are ready", "Hello from behind the sign-in",
		`server got: accept {"age":30,"name":"Ada"}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the replay lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "access-") {
		t.Errorf("a token reached the log:\n%s", out)
	}
}
