package command

import (
	"os"
	"path/filepath"
	"slices"
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
	if !ok || review.Description != "Review a change (project)" || review.ArgHint != "[file]" || !strings.Contains(review.Source, ".dsh") {
		t.Fatalf("review = %+v", review)
	}
	if got := review.Expand(" main.go ", nil); got != "Review main.go carefully.\n" {
		t.Errorf("Expand = %q", got)
	}
	// The user's own command wins a clash with the repository's.
	if deploy, _ := Find(cmds, "deploy"); deploy.Body != "the user's deploy\n" {
		t.Errorf("deploy = %+v, want the user's", deploy)
	}
	// A subfolder's command is named by its file, the folder said.
	commit, ok := Find(cmds, "commit")
	if !ok || commit.Description != "Commit (user:git)" || commit.Expand("", nil) != "# Commit\nWrite a commit message.\n" {
		t.Errorf("commit = %+v", commit)
	}
	if got := commit.Expand("small", nil); got != "# Commit\nWrite a commit message.\n\nsmall" {
		t.Errorf("Expand without $ARGUMENTS = %q", got)
	}
	if _, ok := Find(cmds, "notes"); ok {
		t.Error("a .txt file became a command")
	}
}

// Claude Code's command files: subfolders said in the description, a name
// two subfolders share kept by the first and namespaced for the second, a
// plugin's directory namespaced with its variables; front matter that is not
// YAML (an unquoted value with ": ") read leniently; allowed-tools,
// disallowed-tools, model and disable-model-invocation kept.
func TestClaudeCodeCommandFiles(t *testing.T) {
	root, plugin := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".claude/commands/backend/test.md"), "Run the backend tests.\n")
	write(t, filepath.Join(root, ".claude/commands/frontend/test.md"), "Run the frontend tests.\n")
	write(t, filepath.Join(root, ".claude/commands/commit.md"), "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\ndisallowed-tools: Write\ndescription: Create a commit: staged or not\nargument-hint: [message]\nmodel: claude-haiku-4-5\ndisable-model-invocation: true\n---\nCommit: $1\n")
	write(t, filepath.Join(plugin, "commands/hello.md"), "---\ndescription: hello\n---\nRun ${CLAUDE_PLUGIN_ROOT}/hello.sh\n")
	dirs := []Dir{{Path: filepath.Join(root, ".claude/commands"), Root: root, Trusted: true},
		{Path: filepath.Join(plugin, "commands"), Label: "plugin kit", Namespace: "kit", Vars: map[string]string{"CLAUDE_PLUGIN_ROOT": plugin}}}
	cmds, err := All(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, "/"+c.Name+" "+c.Description)
	}
	want := []string{"/commit Create a commit: staged or not (project)", "/frontend:test Run the frontend tests. (project:frontend)",
		"/kit:hello hello (plugin kit)", "/test Run the backend tests. (project:backend)"}
	if !slices.Equal(got, want) {
		t.Errorf("commands\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c, _ := Find(cmds, "commit")
	if !slices.Equal(c.Run.Allowed, []string{"Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"}) || !slices.Equal(c.Run.Disallowed, []string{"Write"}) ||
		c.Run.Model != "claude-haiku-4-5" || !c.Run.NoModel || c.ArgHint != "[message]" || c.Untrusted || !c.Repo {
		t.Errorf("commit = %+v", c)
	}
	h, _ := Find(cmds, "kit:hello")
	if text, err := h.Text("", nil); err != nil || text != "Run "+plugin+"/hello.sh\n" {
		t.Errorf("kit:hello = %q, %v", text, err)
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

// Bodies expand as Claude Code's do: $ARGUMENTS whole, $1 … by position
// (quotes keep spaces; a missing one is empty), ${NAME} from vars, and a body
// that takes no argument gets them after it.
func TestExpand(t *testing.T) {
	vars := map[string]string{"CLAUDE_PROJECT_DIR": "/src/app"}
	tests := []struct{ body, args, want string }{
		{"Review $ARGUMENTS.", "a.go b.go", "Review a.go b.go."},
		{"Fix issue #$1 with priority $2.", "123 high", "Fix issue #123 with priority high."},
		{"Title: $1; body: $2", `"two words" 'and more' extra`, "Title: two words; body: and more"},
		{"Only $1 and $3.", "a", "Only a and ."},
		{"$1 then all: $ARGUMENTS", "x y", "x then all: x y"},
		// Claude Code's skills count from 0: a body that uses $0 does too.
		{"Migrate $0 from $1 to $2.", `"My Button" React Vue`, "Migrate My Button from React to Vue."},
		{"First: $ARGUMENTS[0]; second: $ARGUMENTS[1]; all: $ARGUMENTS", "a b", "First: a; second: b; all: a b"},
		{"Run ${CLAUDE_PROJECT_DIR}/scripts/x.sh ${OTHER}", "", "Run /src/app/scripts/x.sh ${OTHER}"},
		{"No arguments here.\n", "extra words", "No arguments here.\n\nextra words"},
		{"No arguments here.\n", "", "No arguments here.\n"},
	}
	for _, tt := range tests {
		if got := (Command{Body: tt.body}).Expand(tt.args, vars); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

// FuzzSplitArgs: without quotes, the words are the fields; with them, no
// word is longer than the input.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`a b`, `"a b" c`, `'x`, `a"b"c`, "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words := splitArgs(s)
		if !strings.ContainsAny(s, `"'`) && !slices.Equal(words, strings.Fields(s)) && len(words)+len(strings.Fields(s)) > 0 {
			t.Errorf("splitArgs(%q) = %q, want the fields %q", s, words, strings.Fields(s))
		}
		for _, w := range words {
			if len(w) > len(s) {
				t.Errorf("splitArgs(%q) made %q", s, w)
			}
		}
	})
}
