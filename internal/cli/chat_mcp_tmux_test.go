package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestChatMCPResourcesInTmux drives the real chat with npm's reference
// "everything" server configured: @ completes its resources as @SERVER:URI,
// the one chosen is attached (a chip, and the model is sent its text), a
// missing one is noted in the chat, and /mcp lists the server's resources.
func TestChatMCPResourcesInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	everything := npmBin(t, "mcp-server-everything")
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "xdg", "dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "xdg", "dsh", "config.toml"), fmt.Sprintf("[mcp.everything]\ncommand = %q\nargs = [\"stdio\"]\n", everything))
	script := filepath.Join(tmp, "echo.json")
	writeFile(t, script, `{"turns": [{"echo_request": true}, {"echo_request": true}]}`)

	p := &tmuxPane{t: t, socket: fmt.Sprintf("dsh-mcp-test-%d", os.Getpid()), target: "chat"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"),
		"HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color", "PATH=" + os.Getenv("PATH")}
	cmd := fmt.Sprintf("cd %s && env %s %s --color never --provider script --script %s; echo \"dsh exited $?\"; sleep 600",
		ws, strings.Join(env, " "), bin, script)
	p.tmux("new-session", "-d", "-s", p.target, "-x", "120", "-y", "50", cmd)

	p.waitFor("the input", regexp.MustCompile(`Ask dsh`))
	// The session, and with it its servers, opens with the first prompt.
	p.typeText("hello", "Enter")
	p.waitFor("the first answer", regexp.MustCompile(`user: hello`))
	p.typeText("/mcp", "Enter")
	p.waitFor("the /mcp listing", regexp.MustCompile(`- everything: 16 tools, 4 prompts[\s\S]*- @everything:demo://resource/static/document/architecture\.md — architecture\.md, text/markdown`))
	p.typeText("summarise @archmd")
	p.waitFor("the completion", regexp.MustCompile(`› @everything:demo://resource/static/document/architecture\.md`))
	p.typeText("", "Tab")
	p.typeText("and @everything:demo://resource/static/document/nope.md", "Enter")
	// The note comes as the prompt is sent, before the prompt's record.
	p.waitFor("the note, the chip and the model's text", regexp.MustCompile(
		`· not attached: @everything:demo://resource/static/document/nope\.md: MCP server everything: no such resource[\s\S]*`+
			`› summarise @everything:demo://resource/static/document/architecture\.md[\s\S]*`+
			`attached demo://resource/static/document/architecture\.md \(44 lines\)[\s\S]*`+
			`<attached file="demo://resource/static/document/architecture\.md">`))
	p.typeText("/exit", "Enter")
	p.waitFor("dsh to exit", regexp.MustCompile(`dsh exited 0`))
}
