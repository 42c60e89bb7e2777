package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
)

// TestMCPResources: a prompt's resource_link to a resource the session's MCP
// server (npm's reference "everything" server) lists is read through MCP and
// attached like an @SERVER:URI mention, which is attached too; a link no
// server lists stays a link; a mention of a resource that is not there is
// told in the thread and the prompt still runs. /mcp lists the server's
// resources. A reload shows the attachment from the log, with no server.
func TestMCPResources(t *testing.T) {
	everything := npmBin(t, "mcp-server-everything")
	real, err := filepath.EvalSymlinks(everything)
	if err != nil {
		t.Fatal(err)
	}
	const arch, start_ = "demo://resource/static/document/architecture.md", "demo://resource/static/document/startup.md"
	docs := map[string]string{}
	for uri, name := range map[string]string{arch: "architecture.md", start_: "startup.md"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		docs[uri] = string(b)
	}
	dir := t.TempDir()
	c := start(t, options{sessionDir: dir, script: script(t, turn{Text: "Read them."})})
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: everything, Args: []string{"stdio"}, Env: []sdk.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.SessionId
	c.announced(id)
	if !strings.Contains(strings.Join(c.out.all(), "\n"), `"name":"mcp"`) {
		t.Error("/mcp is not among the session's commands")
	}
	from := c.mark()
	r, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("Compare"), sdk.ResourceLinkBlock("architecture.md", arch),
		sdk.TextBlock(" with @everything:" + start_ + ", not @everything:demo://resource/static/document/nope.md; see "),
		sdk.ResourceLinkBlock("main.go", "file:///src/main.go"),
	}})
	if err != nil || r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("session/prompt: %v, %v", r.StopReason, err)
	}
	c.mustPrompt(id, "/mcp", sdk.StopReasonEndTurn)
	golden(t, "mcp-resources", c.transcript(from, id))

	var user session.Record
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser {
			user = r
		}
	}
	want := "Compare @everything:" + arch + " with @everything:" + start_ +
		", not @everything:demo://resource/static/document/nope.md; see [@main.go](file:///src/main.go)"
	if user.Text != want || len(user.Content) != 2 || user.Content[0] != card.Resource(arch, docs[arch]) ||
		user.Content[1] != card.Resource(start_, docs[start_]) {
		t.Errorf("logged %q with %d blocks; want %q with both documents", user.Text, len(user.Content), want)
	}
	c.close()

	again := start(t, options{sessionDir: dir, cwd: c.cwd, script: script(t, turn{Text: "x"})})
	from = again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "mcp-resources-load", again.transcript(from, id))
	replay := strings.Join(again.transcript(from, id), "\n")
	for _, chip := range []string{"attached " + arch + " (44 lines)", "attached " + start_ + " (73 lines)"} {
		if !strings.Contains(replay, chip) {
			t.Errorf("the reload does not show %q:\n%s", chip, replay)
		}
	}
}
