package acp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
)

// npmBin finds a program npm installed for the tests: .ci/run installs them
// into $DSH_TEST_NPM (default ~/.cache/dsh-test-npm) and sets DSH_REQUIRE_MCP=1
// so that a missing install fails instead of skipping.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("DSH_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := name + " is not installed (" + bin + "); run .ci/run or: npm install --prefix " + dir +
			" acpx @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem"
		if os.Getenv("DSH_REQUIRE_MCP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestAcpx drives `dsh acp` with npm's acpx client, as a user would: a new
// session with MCP servers (server-everything and server-filesystem), a prompt
// whose turn calls a tool of each, a model change, the session list, and a
// second prompt, which acpx sends after session/resume.
func TestAcpx(t *testing.T) {
	acpx := npmBin(t, "acpx")
	everything := npmBin(t, "mcp-server-everything")
	filesystem := npmBin(t, "mcp-server-filesystem")
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, home := t.TempDir(), t.TempDir()
	scriptPath := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptPath, []byte(script(t,
		turn{Text: "Asking the servers.", ToolCalls: []call{
			{ID: "e1", Name: "mcp__everything__echo", Args: map[string]any{"message": "hi from acpx"}},
			{ID: "f1", Name: "mcp__files__list_directory", Args: map[string]any{"path": cwd}},
		}},
		turn{Text: "Both answered."})), 0o644); err != nil {
		t.Fatal(err)
	}
	mcpConfig := filepath.Join(t.TempDir(), "mcp.json")
	servers, err := json.Marshal(map[string]any{"mcpServers": []map[string]any{
		{"name": "everything", "command": everything, "args": []string{"stdio"}, "env": []any{}},
		{"name": "files", "command": filesystem, "args": []string{cwd}, "env": []any{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mcpConfig, servers, 0o644); err != nil {
		t.Fatal(err)
	}
	agentCmd := strings.Join([]string{dshBin, "acp", "--provider", "script", "--script", scriptPath, "--session-dir", dir}, " ")
	run := func(args ...string) string {
		t.Helper()
		// A queue owner keeps the agent for --ttl seconds after the last command.
		cmd := exec.Command(acpx, append([]string{"--agent", agentCmd, "--cwd", cwd, "--format", "json", "--ttl", "1",
			"--approve-all", "--mcp-config", mcpConfig}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		cmd.Dir = cwd
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("acpx %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		// The next command starts dsh anew (and so resumes the session) only
		// once this one's queue owner is gone; one that is leaving may not take it.
		waitGone(t, dir, home)
		return string(out)
	}
	t.Cleanup(func() { waitGone(t, dir, home) })

	run("sessions", "new")
	ids, err := os.ReadDir(dir)
	// The session's log; its workspace's checkpoints are a directory beside.
	ids = slices.DeleteFunc(ids, func(e os.DirEntry) bool { return e.IsDir() })
	if err != nil || len(ids) != 1 {
		t.Fatalf("sessions: %v, %v", ids, err)
	}
	id := strings.TrimSuffix(ids[0].Name(), ".jsonl")

	out := run("prompt", "Use the servers.")
	for _, want := range []string{"Echo: hi from acpx", "[FILE] notes.txt", `"stopReason":"end_turn"`} {
		if !strings.Contains(out, want) {
			t.Errorf("acpx prompt output lacks %q:\n%s", want, out)
		}
	}
	if out := run("set", "model", "claude-haiku-4-5"); !strings.Contains(out, `"modelId":"claude-haiku-4-5"`) {
		t.Errorf("acpx set model:\n%s", out)
	}
	if out := run("sessions", "list"); !strings.Contains(out, `"sessionId":"`+id+`"`) || !strings.Contains(out, `"title":"Use the servers."`) {
		t.Errorf("acpx sessions list does not show the session with its title:\n%s", out)
	}
	out = run("prompt", "Still there?")
	// Each acpx command here starts a new dsh, whose script starts over: the
	// second prompt calls the tools again.
	if !strings.Contains(out, `"method":"session/resume"`) || !strings.Contains(out, "Echo: hi from acpx") {
		t.Errorf("the second prompt did not resume the session:\n%s", out)
	}
	if strings.Contains(out, "user_message_chunk") {
		t.Errorf("session/resume replayed the history:\n%s", out)
	}

	recs, err := session.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		switch r.Type { //nolint:exhaustive // only what the test checks
		case session.TypeUser:
			got = append(got, "user "+r.Text)
		case session.TypeModel:
			if m := "model " + r.Model; got[len(got)-1] != m { // acpx sets its model again after resuming
				got = append(got, m)
			}
		case session.TypeToolResult:
			if r.Result.IsError {
				t.Errorf("call %s failed: %s", r.CallID, r.Result.TextOf())
			}
			got = append(got, "result "+r.CallID)
		}
	}
	want := "user Use the servers.|result e1|result f1|model claude-haiku-4-5|user Still there?|result e1|result f1"
	if strings.Join(got, "|") != want {
		t.Errorf("the log holds %q, want %q", strings.Join(got, "|"), want)
	}
}

// waitGone waits until no process mentions dir on its command line (dsh and
// the MCP servers) or runs with home as its HOME (acpx and its queue owner,
// whose command line names neither, and which still writes home's
// .acpx/sessions after dsh is gone): all end once the owner's TTL is up. It
// takes two scans in a row that find none: a process forked while one scan
// reads /proc, by a parent that then exits, is missed by that scan alone.
func waitGone(t *testing.T, dir, home string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for empty := 0; empty < 2; {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
			if err != nil {
				continue
			}
			env, _ := os.ReadFile(filepath.Join(p, "environ")) // unreadable: not ours
			if strings.Contains(string(cmdline), dir) || slices.Contains(strings.Split(string(env), "\x00"), "HOME="+home) {
				left = append(left, strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		if len(left) == 0 {
			empty++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		empty = 0
		if time.Now().After(deadline) {
			t.Errorf("processes left behind: %q", left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
