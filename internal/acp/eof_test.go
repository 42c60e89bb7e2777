package acp_test

import (
	"os/exec"
	"strings"
	"testing"
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
