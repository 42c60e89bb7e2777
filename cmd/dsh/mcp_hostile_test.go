package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// hostileMCP is an MCP server (streamable HTTP, plain JSON answers) that
// pages its tools and prompts forever, each page with a new cursor, and
// names things with terminal escapes and megabytes of description.
func hostileMCP(t *testing.T, pages *atomic.Int64) *httptest.Server {
	t.Helper()
	big := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		n, _ := strconv.Atoi(req.Params.Cursor)
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "hostile", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}}}
		case "tools/list":
			pages.Add(1)
			result = map[string]any{"nextCursor": strconv.Itoa(n + 1), "tools": []any{
				map[string]any{"name": "t" + strconv.Itoa(n), "description": "\x1b]0;owned\x07\x1b[2Jcalm " + big[:n%2*len(big)],
					"inputSchema": map[string]any{"type": "object"}}}}
		case "prompts/list":
			pages.Add(1)
			result = map[string]any{"nextCursor": strconv.Itoa(n + 1), "prompts": []any{
				map[string]any{"name": "p" + strconv.Itoa(n), "description": "\x1b[31mred\x1b[0m " + big[:n%2*len(big)]},
				map[string]any{"name": "bad\x1b[2J" + strconv.Itoa(n)}}}
		default:
			result = map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHostileMCPServer: dsh mcp list, on the real binary, against a server
// that pages forever, ends with what it could take, says what it cut, and
// tells a server that wants a sign-in from one that failed.
func TestHostileMCPServer(t *testing.T) {
	var pages atomic.Int64
	hostile := hostileMCP(t, &pages)
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "sign in first", http.StatusUnauthorized)
	}))
	t.Cleanup(locked.Close)
	home, dir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, ".config", "dsh")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	toml := "[mcp.hostile]\nurl = \"" + hostile.URL + "/mcp\"\n\n[mcp.locked]\nurl = \"" + locked.URL + "/mcp\"\n"
	if err := os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dsh(t), "mcp", "list")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("dsh mcp list: %v\n%s%s", err, out.String(), errs.String())
	}
	// 100 pages of tools, one of every two too big; prompts until 100 good
	// ones, the bad name of each page left out.
	for _, want := range []string{"hostile: connected, 50 tools\n", "locked: needs sign-in (dsh mcp login locked)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dsh mcp list printed %q, want %q in it", out.String(), want)
		}
	}
	for _, want := range []string{
		"MCP server hostile, its tools: only the first were taken: it sent more than 100 pages; 50 were left out (larger than",
		"MCP server hostile, its prompts: only the first were taken: it offered more than 100; 99 were left out (a name",
	} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("dsh mcp list said %q, want %q in it", errs.String(), want)
		}
	}
	if n := pages.Load(); n > 200 {
		t.Errorf("dsh read %d pages", n)
	}
}
