package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// TestProjectFileLinks: a project's .dsh/config.toml that links out of the
// repository (to a file of the user's, to /dev/zero) is refused with the link
// named, and never read; the user's own file may be a link (dotfiles).
func TestProjectFileLinks(t *testing.T) {
	for _, target := range []string{"/dev/zero", "$HOME/secret.toml"} {
		w := newWorld(t, "", "")
		w.write(filepath.Join(w.home, "secret.toml"), "model = \"secret\"\n")
		if err := os.MkdirAll(filepath.Dir(w.projectPath()), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.ReplaceAll(target, "$HOME", w.home), w.projectPath()); err != nil {
			t.Fatal(err)
		}
		_, err := Load(w.project, w.getenv)
		if !errors.Is(err, workspace.ErrOutside) || !strings.Contains(err.Error(), "config.toml is a symlink to ") {
			t.Errorf("%s: err = %v, want the link refused", target, err)
		}
	}

	w := newWorld(t, "", "")
	dotfiles := filepath.Join(w.home, "dotfiles", "dsh.toml")
	w.write(dotfiles, "model = \"mine\"\n")
	if err := os.MkdirAll(filepath.Dir(w.userPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, w.userPath()); err != nil {
		t.Fatal(err)
	}
	if c := w.load(); c.Model != "mine" {
		t.Errorf("the user's linked file: model %q", c.Model)
	}
	if err := os.Remove(w.userPath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", w.userPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(w.project, w.getenv); !errors.Is(err, workspace.ErrNotRegular) {
		t.Errorf("the user's file linked to /dev/zero: err = %v", err)
	}
}

// TestMCPTrust: only the user's file can trust a server's tool hints; a
// project's `trusted` is refused, even in a trusted project.
func TestMCPTrust(t *testing.T) {
	w := newWorld(t, "[mcp.files]\ncommand = \"files-server\"\ntrusted = true\n", "")
	c := w.load()
	if len(c.MCP) != 1 || !c.MCP[0].Trusted {
		t.Errorf("the user's trusted server: %+v", c.MCP)
	}
	w.write(w.userPath(), "trusted_projects = [\"$PROJECT\"]\n")
	w.write(w.projectPath(), "[mcp.evil]\ncommand = \"evil\"\ntrusted = true\n")
	if _, err := Load(w.project, w.getenv); err == nil || !strings.Contains(err.Error(), "mcp.evil.trusted belongs in the user's file") {
		t.Errorf("a project trusting its own server: err = %v", err)
	}
}
