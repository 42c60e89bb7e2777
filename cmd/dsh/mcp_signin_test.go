package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp/mcptest"
	"github.com/dsh-dev/dsh/internal/session"
)

// TestMCPSignInRun: dsh run, on the real binary, against a server behind a
// local OAuth sign-in: the sign-in card with its link is printed while the
// turn runs (the model asks the user a question, which holds the turn);
// the test follows the link as a browser would, the card says signed in,
// and once the question is answered the model's call of the server's tool
// runs in the same run.
func TestMCPSignInRun(t *testing.T) {
	srv := mcptest.NewOAuthServer(t, func() *mcpsdk.Server {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "v0"}, nil)
		mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "greet", Description: "Greets."},
			func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "Hello from behind the sign-in"}}}, nil, nil
			})
		return s
	})
	tmp := t.TempDir()
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
	script := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"tool_calls": [{"id": "q1", "name": "ask_user", "args": {"question": "Signed in yet?", "options": [{"label": "yes"}, {"label": "no"}]}}]},
		{"tool_calls": [{"id": "g1", "name": "mcp__remote__greet", "args": {}}]},
		{"text": "Greeted."}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dsh(t), "run", "--color", "never", "--provider", "script", "--script", script, "--mode", "bypass", "greet me")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(tmp, "home"), "XDG_CONFIG_HOME="+config, "XDG_STATE_HOME="+filepath.Join(tmp, "state"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errs lockedBuilder // written by exec's copier while a failure reads it
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	until := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("dsh run ended before %s:\n%s%s", what, out.String(), errs.String())
				}
				out.WriteString(l + "\n")
				if m := re.FindStringSubmatch(l); m != nil {
					return m
				}
			case <-timeout:
				t.Fatalf("no %s:\n%s%s", what, out.String(), errs.String())
			}
		}
	}
	// dsh run prints nothing while a question is open, and the model may
	// ask before the sign-in's card is logged: the log, not the terminal,
	// gives the link and says when the server has joined.
	until("a first line", regexp.MustCompile(`.`))
	logs, _ := filepath.Glob(filepath.Join(tmp, "state", "dsh", "sessions", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v", logs)
	}
	signIn := func(state string) *session.SignIn {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var found *session.SignIn
		stop := errors.New("found")
		if err := session.Follow(ctx, logs[0], func(r session.Record) error {
			if r.SignIn != nil && r.SignIn.State == state {
				found = r.SignIn
				return stop
			}
			return nil
		}); !errors.Is(err, stop) {
			t.Fatalf("the log holds no sign-in %s: %v\n%s%s", state, err, out.String(), errs.String())
		}
		return found
	}
	link := signIn(session.SignInWaiting).URL
	if !strings.HasPrefix(link, srv.URL+"/authorize?") {
		t.Fatalf("the card's link = %q", link)
	}
	if page, err := mcptest.Follow(link); err != nil || !strings.Contains(page, "Signed in to remote") {
		t.Fatalf("following the link: %q, %v", page, err)
	}
	signIn(session.SignInDone)
	if _, err := io.WriteString(stdin, "yes\n"); err != nil {
		t.Fatal(err)
	}
	until("the tool's answer", regexp.MustCompile(`Hello from behind the sign-in`))
	until("the model's text", regexp.MustCompile(`Greeted\.`))
	for l := range lines {
		out.WriteString(l + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dsh run: %v\n%s", err, errs.String())
	}
	t.Logf("dsh run printed:\n%s", out.String())
	// The card, drawn as the sign-in went: the link wrapped at the width.
	unwrapped := regexp.MustCompile(`\n +`).ReplaceAllString(out.String(), "")
	for _, want := range []string{"● Sign in to MCP server remote", link, "waiting for you: open the link", "signed in: its tools are ready"} {
		if !strings.Contains(out.String(), want) && !strings.Contains(unwrapped, want) {
			t.Errorf("dsh run did not print %q", want)
		}
	}
}

// lockedBuilder is a strings.Builder that one goroutine writes while another
// reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
