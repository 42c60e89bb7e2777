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
	write(t, filepath.Join(cfg, "dsh", "commands", "review.md"), "the user's review, shadowed by the project's\n")
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
