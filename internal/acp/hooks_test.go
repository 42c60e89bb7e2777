package acp_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// A hook's run reaches an ACP client as a finished tool call of its own (kind
// other, titled by the hook, its decision and output as content), where it
// ran; a PreToolUse hook's exit 2 fails the call it blocked with its stderr.
// session/load replays the same cards.
func TestHookCards(t *testing.T) {
	cfg := t.TempDir()
	hook := filepath.Join(cfg, "block-rm.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"+
		"if grep -q '\"command\":\"rm '; then echo 'rm is not allowed here' >&2; exit 2; fi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cfg, "dsh"), 0o755); err != nil {
		t.Fatal(err)
	}
	toml := "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"" + hook + "\" }]\n"
	if err := os.WriteFile(filepath.Join(cfg, "dsh", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, home := t.TempDir(), t.TempDir()
	o := options{sessionDir: dir, configHome: cfg, env: []string{"HOME=" + home}, script: script(t,
		turn{ToolCalls: []call{bash("b1", "rm notes.txt")}},
		turn{Text: "I left it."},
	)}
	c := start(t, o)
	if err := os.WriteFile(filepath.Join(c.cwd, "notes.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := c.newSession()
	c.mustPrompt(id, "remove the notes", sdk.StopReasonEndTurn)
	live := c.transcript(0, id)
	for i, l := range live {
		live[i] = strings.ReplaceAll(l, hook, "{{hook}}")
	}
	golden(t, "hooks", live)
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); err != nil {
		t.Errorf("the hook did not keep notes.txt: %v", err)
	}
	c.close()

	o.cwd, o.script = c.cwd, script(t, turn{Text: "ok"})
	again := start(t, o)
	from := again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	loaded := again.transcript(from, id)
	for i, l := range loaded {
		loaded[i] = strings.ReplaceAll(l, hook, "{{hook}}")
	}
	if lf, rf := fold(t, live), fold(t, loaded); !reflect.DeepEqual(lf["calls"], rf["calls"]) {
		t.Errorf("the reloaded cards differ from the live ones:\nlive:   %v\nloaded: %v", lf["calls"], rf["calls"])
	}
}

// TestUnreadableProjectSettings: a repository's .claude/settings.json linked
// to /dev/zero, or unparsable, stopped dsh acp there (issue 34); the session
// now opens and answers, and the thread says its hooks are ignored.
func TestUnreadableProjectSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"link to /dev/zero", func(path string) error { return os.Symlink("/dev/zero", path) }},
		{"unparsable", func(path string) error { return os.WriteFile(path, []byte(`{"hooks": {`), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(filepath.Join(cwd, ".claude", "settings.json")); err != nil {
				t.Fatal(err)
			}
			c := start(t, options{cwd: cwd, script: script(t, turn{Text: "Hello."})})
			id := c.newSession()
			c.mustPrompt(id, "hi", sdk.StopReasonEndTurn)
			if !strings.Contains(strings.Join(c.transcript(0, id), "\n"), "its hooks are ignored") {
				t.Errorf("the thread does not say the settings were ignored:\n%s", strings.Join(c.transcript(0, id), "\n"))
			}
		})
	}
}
