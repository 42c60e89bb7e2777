package host

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/mcp"
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

// TestMCPSignInOffered: a session whose server wants a sign-in opens at once
// without it, shows the user the link, tells the model, and /mcp says so;
// closing the session stops waiting for the browser.
func TestMCPSignInOffered(t *testing.T) {
	// An authorization server of the oldest kind: no metadata, the
	// endpoints at the server's root.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/.well-known/"):
			http.NotFound(w, r)
		case r.URL.Path == "/register":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "dsh"})
		default:
			http.Error(w, "sign in first", http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "one"}]}`)
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{{Name: "remote", Type: "http", URL: srv.URL + "/mcp"}}
	o.MCPTokens = &memTokens{m: map[string][]byte{}}
	linked := make(chan string, 1)
	o.MCPNotice = func(msg string) {
		if strings.Contains(msg, "needs you to sign in") {
			linked <- msg
		}
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	msg := <-linked
	if !strings.HasPrefix(msg, "MCP server remote needs you to sign in: open "+srv.URL+"/authorize?") ||
		!strings.HasSuffix(msg, "(or run dsh mcp login remote)") {
		t.Errorf("the link told = %q", msg)
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
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
