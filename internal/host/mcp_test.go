package host

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/provider"
)

// npmBin finds an npm reference server; .ci/run installs them into
// $DSH_TEST_NPM (default ~/.cache/dsh-test-npm) and sets DSH_REQUIRE_MCP=1.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("DSH_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := "npm reference server " + name + " is not installed (" + bin + ")"
		if os.Getenv("DSH_REQUIRE_MCP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestMCPStartedByHost: the session's MCP servers are started when it opens
// (Create and Load), their tools offered to the model; one that does not start
// is told to the user and, with the next prompt, to the model.
func TestMCPStartedByHost(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "one"}, {"text": "two"}]}`)
	var mu sync.Mutex
	var told []string
	o := options(t, root, dir, p)
	o.MCP = []mcp.ServerConfig{
		{Name: "everything", Type: "stdio", Command: bin, Args: []string{"stdio"}},
		{Name: "broken", Type: "stdio", Command: "/nonexistent/mcp-server"},
	}
	o.MCPNotice = func(msg string) {
		mu.Lock()
		told = append(told, msg)
		mu.Unlock()
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Registry().Get("mcp__everything__echo"); !ok {
		t.Error("the server's tools are not in the session's registry")
	}
	mu.Lock()
	if len(told) != 1 || !strings.Contains(told[0], "MCP server broken") {
		t.Errorf("told the user %q", told)
	}
	mu.Unlock()
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	req := p.last(t)
	if !strings.Contains(req.Messages[0].Parts[0].Text, "MCP server broken") {
		t.Errorf("the model was not told: %q", req.Messages[0].Parts[0].Text)
	}
	if !hasTool(req, "mcp__everything__echo") {
		t.Error("the model was not offered the server's tools")
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	o.MCP = o.MCP[:1]
	l, err := Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if _, ok := l.Registry().Get("mcp__everything__echo"); !ok {
		t.Error("a loaded session has no MCP tools")
	}
}

func hasTool(req provider.Request, name string) bool {
	for _, d := range req.Tools {
		if d.Name == name {
			return true
		}
	}
	return false
}
