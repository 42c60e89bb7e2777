package acp_test

import (
	"bufio"
	"bytes"
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

// TestRequestsBeforeEOFAreAnswered: a client that writes its requests and closes
// its end at once still gets every answer, then dsh exits.
func TestRequestsBeforeEOFAreAnswered(t *testing.T) {
	cmd := exec.Command(dshBin, "acp", "--session-dir", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cmd.Dir + `","mcpServers":[]}}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dsh acp: %v", err)
	}
	for _, want := range []string{`"id":1,"result":{"agentCapabilities"`, `"id":2,"result":{`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
}

// TestClientThatStopsReadingCannotHangExit: a client that stops reading dsh's
// output while a command floods it with updates, then closes its end, still
// sees dsh exit promptly, with the command's processes gone.
func TestClientThatStopsReadingCannotHangExit(t *testing.T) {
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "s.json")
	if err := os.WriteFile(scriptPath, []byte(`{"turns":[
		{"tool_calls":[{"id":"c1","name":"bash","args":{"command":"echo $$ > pgid; while :; do echo flood flood flood flood flood flood flood; done"}}]},
		{"text":"never"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	cmd := exec.Command(dshBin, "acp", "--mode", "bypass", "--session-dir", t.TempDir(), "--provider", "script", "--script", scriptPath)
	cmd.Dir = cwd
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"_meta":{"terminal_output":true}}}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}`)
	br := bufio.NewReader(stdout)
	var sid string
	for sid == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the session id: %v", err)
		}
		if _, rest, ok := strings.Cut(line, `"sessionId":"`); ok && strings.Contains(line, `"id":2`) {
			sid, _, _ = strings.Cut(rest, `"`)
		}
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"flood"}]}}`)
	// From here on the client reads nothing: dsh's writes fill the pipe.
	var pgid int
	deadline := time.Now().Add(20 * time.Second)
	for pgid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(cwd, "pgid"))
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if pgid == 0 {
		t.Fatal("the command never started")
	}
	time.Sleep(500 * time.Millisecond) // long enough for the pipe to fill
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		t.Fatalf("dsh did not exit after its client, which stopped reading, closed stdin:\n%s", stderr.String())
	}
	proctest.GroupGone(t, pgid)
}

// TestAutoModeOnlyWithTheSandbox: the editor is offered the auto mode only
// when commands run in the sandbox.
func TestAutoModeOnlyWithTheSandbox(t *testing.T) {
	for _, tc := range []struct {
		args []string
		auto bool
	}{{nil, false}, {[]string{"--sandbox", "on"}, true}} {
		cwd := t.TempDir()
		cmd := exec.Command(dshBin, append([]string{"acp", "--session-dir", t.TempDir()}, tc.args...)...)
		cmd.Dir = cwd
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}` + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dsh acp %v: %v\n%s", tc.args, err, out)
		}
		if got := strings.Contains(string(out), `"id":"auto"`); got != tc.auto {
			t.Errorf("dsh acp %v offers auto: %v, want %v\n%s", tc.args, got, tc.auto, out)
		}
	}
}
