package acp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/session"
)

// A Claude Code plugin put in dsh's own plugin folder reaches the editor: its
// command is offered as guard:greet and expands with ${CLAUDE_PLUGIN_ROOT};
// its PreToolUse hook (jq reads the call) fails the model's rm, and its Stop
// hook runs when the turn ends, each a card of the thread; its .mcp.json
// server (started at ${CLAUDE_PLUGIN_ROOT}'s expansion) answers as
// mcp__plugin_guard_probe__greet.
func TestPluginCommandAndHooks(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the hook scripts read their input with jq")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir()
	plug := filepath.Join(cfg, "dsh", "plugins", "guard")
	if err := os.MkdirAll(filepath.Join(plug, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(plug, "bin", "probe")); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		".mcp.json":                  `{"mcpServers": {"probe": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/probe", "args": ["-test.run=^$"], "env": {"DSH_ACP_TEST_MCP": "1"}}}}`,
		".claude-plugin/plugin.json": `{"name": "guard", "version": "0.1.0"}`,
		"commands/greet.md":          "---\ndescription: greet someone\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS from ${CLAUDE_PLUGIN_ROOT}.\n",
		"hooks/hooks.json": `{"hooks": {
			"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/no-rm.sh"}]}],
			"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh"}]}]}}`,
		"hooks/no-rm.sh": "#!/bin/bash\ncmd=$(jq -r '.tool_input.command // empty')\n" +
			"case \"$cmd\" in rm\\ *) echo \"guard: no rm ($cmd)\" >&2; exit 2 ;; esac\n",
		"hooks/stop.sh": "#!/bin/bash\necho \"$(jq -r '.hook_event_name') from $(basename \"$CLAUDE_PLUGIN_ROOT\")\" > \"$CLAUDE_PROJECT_DIR/stop-ran\"\n",
	} {
		p := filepath.Join(plug, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, options{configHome: cfg, env: []string{"HOME=" + t.TempDir()}, script: script(t,
		turn{ToolCalls: []call{bash("b1", "rm notes.txt"), {ID: "m1", Name: "mcp__plugin_guard_probe__greet", Args: map[string]any{"name": "plugin"}}}},
		turn{Text: "I left it."},
	)})
	if err := os.WriteFile(filepath.Join(c.cwd, "notes.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := c.newSession()
	c.waitFor("guard:greet offered", func(l string) bool {
		return strings.Contains(l, "available_commands_update") && strings.Contains(l, `"name":"guard:greet"`)
	})
	c.mustPrompt(id, "/guard:greet world", sdk.StopReasonEndTurn)
	thread := strings.Join(c.transcript(0, id), "\n")
	for _, want := range []string{
		`PreToolUse hook (Bash): ${CLAUDE_PLUGIN_ROOT}/hooks/no-rm.sh`,
		`guard: no rm (rm notes.txt)`,
		`Stop hook: ${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh`,
		`Hello, plugin!`,
	} {
		if !strings.Contains(thread, want) {
			t.Errorf("the thread lacks %q:\n%s", want, thread)
		}
	}
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); err != nil {
		t.Errorf("the hook did not keep notes.txt: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(c.cwd, "stop-ran")); err != nil || string(b) != "Stop from guard\n" {
		t.Errorf("the Stop hook: %q, %v", b, err)
	}
	var sent []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser {
			sent = append(sent, attach.ModelText(r.Text, r.Content))
		}
	}
	if want := "Say hello to world from " + plug + "."; len(sent) != 1 || strings.TrimSpace(sent[0]) != want {
		t.Errorf("sent %q, want %q", sent, want)
	}
}
