package main

import (
	"encoding/json"
	"fmt"
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

// hugePage is 50 MB: one page of tools no session can use.
const hugePage = 50 << 20

// TestOversizedMCPPage: dsh mcp list, on the real binary, against a server
// over HTTP that answers tools/list with one 50 MB JSON page and a stdio
// server that writes one 50 MB line, reads neither whole: each server fails
// with a message that says why, the HTTP server could not send it all, and
// dsh's memory stays far below what holding the pages takes.
func TestOversizedMCPPage(t *testing.T) {
	var sent atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if req.Method != "tools/list" {
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
				"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "huge", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}}}})
			return
		}
		n, _ := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"description":"`, req.ID)
		sent.Add(int64(n))
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < hugePage/len(chunk); i++ {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return // dsh hung up
			}
		}
		_, _ = w.Write([]byte(`"}]}}`))
	}))
	t.Cleanup(web.Close)

	// A stdio server in sh: it answers initialize, then tools/list with one
	// line of 50 MB, and refuses the rest (the newer protocol's discovery).
	script := `while read -r line; do
	i=$(printf %s "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
	case "$line" in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"line","version":"1"},"capabilities":{"tools":{}}}}\n' "$i" ;;
	*'"method":"tools/list"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"description":"' "$i"
		head -c ` + fmt.Sprint(hugePage) + ` /dev/zero | tr '\0' x
		printf '"}]}}\n' ;;
	*'"id":'*)
		printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$i" ;;
	esac
done
`
	home, dir := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, ".config", "dsh")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(home, "line.sh")
	if err := os.WriteFile(server, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf("[mcp.huge]\nurl = %q\n\n[mcp.line]\ncommand = \"sh\"\nargs = [%q]\n", web.URL+"/mcp", server)
	if err := os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	peakFile := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command(os.Args[0], dsh(t), "mcp", "list")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DSH_TEST_PEAK="+peakFile, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("dsh mcp list: %v\n%s%s", err, out.String(), errs.String())
	}
	data, err := os.ReadFile(peakFile)
	if err != nil {
		t.Fatal(err)
	}
	rss, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dsh mcp list printed:\n%s%s(the HTTP server sent %d of its %d bytes; dsh's peak RSS %d MiB)",
		out.String(), errs.String(), sent.Load(), hugePage, rss>>20)
	for _, want := range []string{
		"huge: failed: listing its tools:", "line: failed: listing its tools:",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dsh mcp list printed %q, want %q in it", out.String(), want)
		}
	}
	if !strings.Contains(out.String(), "larger than 16 MiB") {
		t.Errorf("dsh mcp list printed %q, want the HTTP server's message said too large", out.String())
	}
	if n := sent.Load(); n >= hugePage {
		t.Errorf("the HTTP server sent all of its %d bytes: dsh read the page whole", n)
	}
	// Read whole, the two pages took dsh to 578 MiB here; bounded, to 96.
	if rss >= 4*hugePage {
		t.Errorf("dsh's peak RSS was %d MiB: the 50 MB pages were held", rss>>20)
	}
}
