package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, name, args string
		ok             bool
	}{
		{"/help", "help", "", true},
		{"  /compact keep the API notes ", "compact", "keep the API notes", true},
		{"/git:commit fix it", "git:commit", "fix it", true},
		{"/tmp/x is a path", "", "", false},
		{"hello /help", "", "", false},
		{"/", "", "", false},
		{"/ help", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := Parse(tt.in)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, args, ok, tt.name, tt.args, tt.ok)
		}
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCustomCommands(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".dsh", "commands", "review.md"), "---\ndescription: Review a change\nargument-hint: [file]\n---\nReview $ARGUMENTS carefully.\n")
	write(t, filepath.Join(root, ".dsh", "commands", "deploy.md"), "the project's deploy, shadowed by the user's\n")
	write(t, filepath.Join(cfg, "dsh", "commands", "deploy.md"), "the user's deploy\n")
	write(t, filepath.Join(cfg, "dsh", "commands", "git", "commit.md"), "# Commit\nWrite a commit message.\n")
	write(t, filepath.Join(root, ".claude", "commands", "help.md"), "a custom help cannot shadow the built-in one\n")
	write(t, filepath.Join(root, ".claude", "commands", "notes.txt"), "not markdown\n")
	dirs := Dirs(root, func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	})
	cmds, err := All(dirs)
	if err != nil {
		t.Fatal(err)
	}
	review, ok := Find(cmds, "review")
	if !ok || review.Description != "Review a change" || review.ArgHint != "[file]" || !strings.Contains(review.Source, ".dsh") {
		t.Fatalf("review = %+v", review)
	}
	if got := review.Expand(" main.go "); got != "Review main.go carefully.\n" {
		t.Errorf("Expand = %q", got)
	}
	// The user's own command wins a clash with the repository's.
	if deploy, _ := Find(cmds, "deploy"); deploy.Body != "the user's deploy\n" {
		t.Errorf("deploy = %+v, want the user's", deploy)
	}
	commit, ok := Find(cmds, "git:commit")
	if !ok || commit.Description != "Commit" || commit.Expand("") != "# Commit\nWrite a commit message.\n" {
		t.Errorf("git:commit = %+v", commit)
	}
	if got := commit.Expand("small"); got != "# Commit\nWrite a commit message.\n\nsmall" {
		t.Errorf("Expand without $ARGUMENTS = %q", got)
	}
	if help, _ := Find(cmds, "help"); help.Custom() {
		t.Error("a custom command shadowed /help")
	}
	if _, ok := Find(cmds, "notes"); ok {
		t.Error("a .txt file became a command")
	}
	for _, c := range For(cmds, Editor) {
		if c.Name == "exit" || c.Name == "help" {
			t.Errorf("the editor offers the terminal-only /%s", c.Name)
		}
	}
}

func TestOversizedCommandIsReported(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".dsh", "commands", "big.md"), strings.Repeat("x", maxCommandFile+1))
	cmds, err := All(Dirs(root, func(string) string { return "" }))
	if err == nil || !strings.Contains(err.Error(), "big.md") {
		t.Errorf("err = %v, want the oversized file named", err)
	}
	if _, ok := Find(cmds, "big"); ok {
		t.Error("the oversized command was offered")
	}
	if _, ok := Find(cmds, "help"); !ok {
		t.Error("the built-in commands are missing")
	}
}

// TestHostileCommandFiles: a repository's command file that links to the
// user's key or to /dev/zero is refused and named; it never becomes a prompt,
// and reading it neither hangs nor grows without bound.
func TestHostileCommandFiles(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	key := filepath.Join(home, ".ssh", "id_rsa")
	write(t, key, "-----BEGIN OPENSSH PRIVATE KEY-----\n")
	write(t, filepath.Join(root, ".dsh", "commands", "ok.md"), "fine\n")
	for name, target := range map[string]string{".dsh/commands/key.md": key, ".dsh/commands/zero.md": "/dev/zero", ".claude/commands/k.md": key} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// The user's own directory may hold a link to /dev/zero by mistake: refused too.
	if err := os.MkdirAll(filepath.Join(home, "cfg", "dsh", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(home, "cfg", "dsh", "commands", "z.md")); err != nil {
		t.Fatal(err)
	}
	cmds, err := All(Dirs(root, func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(home, "cfg")
		}
		return ""
	}))
	for _, name := range []string{"key.md", "zero.md", "k.md", "z.md"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("err = %v, want %s named", err, name)
		}
	}
	for _, c := range cmds {
		if strings.Contains(c.Body, "PRIVATE KEY") || c.Name == "zero" || c.Name == "z" {
			t.Errorf("a hostile file became the command %+v", c)
		}
	}
	if _, ok := Find(cmds, "ok"); !ok {
		t.Error("the repository's regular command is missing")
	}
}
