package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedProjectFiles: a repository whose AGENTS.md links to the user's key
// and whose command file links to /dev/zero still opens a session at once; the
// user is told in an agent message what was refused, and the key is in no
// command.
func TestRefusedProjectFiles(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	key := filepath.Join(home, "id_rsa")
	if err := os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cwd, ".dsh", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"AGENTS.md": key, ".dsh/commands/zero.md": "/dev/zero", ".dsh/commands/key.md": key} {
		if err := os.Symlink(target, filepath.Join(cwd, link)); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, options{cwd: cwd, script: `{"turns": [{"text": "ok"}]}`})
	c.newSession()
	for _, what := range []string{"AGENTS.md is a symlink to ", "zero.md is a symlink to /dev/zero", "key.md is a symlink to "} {
		c.waitFor(what, func(l string) bool {
			return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, what)
		})
	}
	for _, l := range c.out.all() {
		if strings.Contains(l, "PRIVATE KEY") {
			t.Errorf("the key reached the client: %s", l)
		}
	}
}
