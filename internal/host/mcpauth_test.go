package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/mcp/mcptest"
	"github.com/dsh-dev/dsh/internal/session"
)

type memTokens struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (m *memTokens) Load(k string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[k], nil
}

func (m *memTokens) Save(k string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[k] = v
	return nil
}

// TestMCPSignInCard: a session whose server wants a sign-in opens at once
// without it and tells the model; the user is shown the link as a sign-in
// record (every consumer's card), /mcp says it waits; once the link is
// followed, as a browser would, a second record says it is done, the
// server joins the session, and the model's next call runs its tool. No
// token reaches the log.
func TestMCPSignInCard(t *testing.T) {
	srv := mcptest.NewOAuthServer(t, func() *mcpsdk.Server {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "v0"}, nil)
		mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "greet", Description: "Greets."},
			func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "Hello from behind the sign-in"}}}, nil, nil
			})
		return s
	})
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "one"},
		{"tool_calls": [{"id": "c1", "name": "mcp__remote__greet", "args": {}}]}, {"text": "two"}]}`)
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "remote", Type: "http", URL: srv.URL + "/mcp"}}
	o.MCPTokens = &memTokens{m: map[string][]byte{}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	signIns := make(chan session.Record, 4)
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindRecord && e.Record.SignIn != nil {
			signIns <- e.Record
		}
	})
	defer sub.Close()
	next := func() session.Record {
		select {
		case r := <-signIns:
			return r
		case <-time.After(time.Minute):
			t.Fatal("no sign-in record")
		}
		return session.Record{}
	}

	r, err := s.Submit(t.Context(), Input{Text: "/mcp", Where: Both})
	if err != nil || !strings.Contains(r.Text, "- remote: needs sign-in") {
		t.Errorf("/mcp = %q, %v", r.Text, err)
	}
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	if got := p.last(t).Messages[0].Parts[0].Text; !strings.Contains(got, "MCP server remote needs the user to sign in") {
		t.Errorf("the model was not told: %q", got)
	}

	waiting := next()
	fmt.Printf("sign-in record: %s %+v\n", waiting.Text, *waiting.SignIn)
	if w := waiting.SignIn; w.State != session.SignInWaiting || w.Server != "remote" || !strings.HasPrefix(w.URL, srv.URL+"/authorize?") {
		t.Fatalf("the first sign-in record = %+v", w)
	}
	page, err := mcptest.Follow(waiting.SignIn.URL)
	if err != nil || !strings.Contains(page, "Signed in to remote") {
		t.Fatalf("following the link: %q, %v", page, err)
	}
	done := next()
	fmt.Printf("sign-in record: %s %+v\n", done.Text, *done.SignIn)
	if d := done.SignIn; d.State != session.SignInDone || d.Server != "remote" {
		t.Fatalf("the second sign-in record = %+v", d)
	}

	if _, err := s.Prompt(t.Context(), "greet"); err != nil {
		t.Fatal(err)
	}
	got := resultText(t, filepath.Join(dir, s.ID()+".jsonl"), "c1")
	fmt.Printf("the tool after the sign-in: %q (error %v)\n", got.TextOf(), got.IsError)
	if got.IsError || got.TextOf() != "Hello from behind the sign-in" {
		t.Errorf("greet after the sign-in = %+v", got)
	}
	if text := p.last(t).Messages; !strings.Contains(fmt.Sprint(text), "signed in to MCP server remote") {
		t.Errorf("the model was not told of the sign-in: %v", text)
	}
	log, err := os.ReadFile(filepath.Join(dir, s.ID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "access-") || strings.Contains(string(log), "the-refresh") {
		t.Error("a token reached the log")
	}
}
