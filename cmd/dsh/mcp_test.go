package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// everythingServer is npm's reference MCP server, which .ci/run installs into
// $DSH_TEST_NPM (default ~/.cache/dsh-test-npm).
func everythingServer(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DSH_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		msg := "npm reference server is not installed (" + bin + "); run: npm install --prefix " + dir +
			" @modelcontextprotocol/server-everything"
		if os.Getenv("DSH_REQUIRE_MCP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestMCPServersLeaveNothing: a stdio MCP server of an ACP session — npm's
// reference server, behind a script that first starts a process in a session
// of its own — leaves no process when its session closes, nor when dsh is
// killed with SIGKILL.
func TestMCPServersLeaveNothing(t *testing.T) {
	bin := everythingServer(t)
	for _, end := range []string{"session/close", "kill -9"} {
		t.Run(end, func(t *testing.T) {
			mark := proctest.Marker()
			dir, home := t.TempDir(), t.TempDir()
			pidFile := filepath.Join(dir, "server.pid")
			server := filepath.Join(dir, "server.sh")
			if err := os.WriteFile(server, fmt.Appendf(nil, "#!/bin/sh\nsetsid -f sleep %s\necho $$ > %s\nexec %s stdio\n", mark, pidFile, bin), 0o755); err != nil {
				t.Fatal(err)
			}
			scriptPath := filepath.Join(dir, "script.json")
			if err := os.WriteFile(scriptPath, []byte(`{"turns":[]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(dsh(t), "acp", "--provider", "script", "--script", scriptPath, "--session-dir", filepath.Join(home, "sessions"))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			outPipe, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("dsh's stderr: %s", stderr.String())
				}
			})
			out := bufio.NewReader(outPipe)
			request := func(id int, method string, params any) map[string]any {
				t.Helper()
				b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := in.Write(append(b, '\n')); err != nil {
					t.Fatal(err)
				}
				for {
					line, err := out.ReadString('\n')
					if err != nil {
						t.Fatalf("%s: no answer: %v", method, err)
					}
					var msg struct {
						ID     *int            `json:"id"`
						Method string          `json:"method"`
						Result map[string]any  `json:"result"`
						Error  json.RawMessage `json:"error"`
					}
					if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.ID == nil || *msg.ID != id || msg.Method != "" {
						continue // a notification or a request of dsh's
					}
					if msg.Error != nil {
						t.Fatalf("%s: %s", method, msg.Error)
					}
					return msg.Result
				}
			}
			request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			sess := request(2, "session/new", map[string]any{"cwd": dir, "mcpServers": []map[string]any{
				{"name": "everything", "command": server, "args": []string{}, "env": []any{}},
			}})
			proctest.WaitRunning(t, mark, 1)
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if !alive(pid) {
				t.Fatalf("the server %d is not running before the end", pid)
			}
			if end == "kill -9" {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			} else {
				request(3, "session/close", map[string]any{"sessionId": sess["sessionId"]})
			}
			proctest.NoneRunning(t, mark)
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("the server %d outlived the %s", pid, end)
				}
				time.Sleep(20 * time.Millisecond)
			}
			_ = in.Close()
			_, _ = io.Copy(io.Discard, out)
		})
	}
}

// alive is whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}
