package lsp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnTsserver: typescript-language-server is pinned to the tsserver its
// own installation resolves (npm's global layout, reached through the bin
// symlink), never to one inside the workspace.
func TestOwnTsserver(t *testing.T) {
	dir := t.TempDir()
	mods := filepath.Join(dir, "lib", "node_modules")
	cli := filepath.Join(mods, "typescript-language-server", "lib", "cli.mjs")
	ts := filepath.Join(mods, "typescript", "lib", "tsserver.js")
	bin := filepath.Join(dir, "bin", "typescript-language-server")
	for _, p := range []string{cli, ts} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cli, bin); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, root, want string
	}{
		{"its own", t.TempDir(), ts},
		{"the workspace's", filepath.Join(dir, "lib"), ""},
	} {
		if got := ownTsserver(bin, tc.root); got != tc.want {
			t.Errorf("%s: tsserver = %q, want %q", tc.name, got, tc.want)
		}
	}
}
