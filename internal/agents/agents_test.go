package agents

import (
	"fmt"

	"github.com/dsh-dev/dsh/internal/frontmatter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// claudeReviewer is a subagent file as Claude Code's documentation writes
// one, with a field dsh does not use (color).
const claudeReviewer = `---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
`

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Claude Code agent file in .claude/agents is read unchanged: its tools
// mapped to dsh's, model inherit as the session's, the body its prompt. The
// user's agent of a name wins over the project's; a YAML list of tools works
// too; a malformed file is skipped and told.
func TestClaudeCodeAgentFiles(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".claude/agents/code-reviewer.md"), claudeReviewer)
	write(t, filepath.Join(root, ".dsh/agents/finder.md"), "---\nname: finder\ndescription: Finds files.\ntools:\n  - Glob\n  - mcp__docs__search\nmodel: haiku\n---\nFind.\n")
	write(t, filepath.Join(root, ".dsh/agents/broken.md"), "---\nname: broken\n---\n")
	write(t, filepath.Join(root, ".dsh/agents/notes.txt"), "not an agent")
	write(t, filepath.Join(home, ".claude/agents/finder.md"), "---\nname: finder\ndescription: The user's own finder.\n---\n")
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	got, err := All(Dirs(root, env))
	if err == nil || !strings.Contains(err.Error(), "broken.md: front matter: no description") {
		t.Errorf("error %v, want the broken file named", err)
	}
	if len(got) != 2 {
		t.Fatalf("agents %+v, want finder (the user's) and code-reviewer", got)
	}
	if got[0].Name != "finder" || got[0].Description != "The user's own finder." || got[0].Tools != nil {
		t.Errorf("finder %+v: the user's (every tool) wins over the project's", got[0])
	}
	r := got[1]
	if r.Name != "code-reviewer" || !strings.HasPrefix(r.Description, "Expert code review specialist.") ||
		!slices.Equal(r.Tools, []string{"read", "grep", "glob", "bash"}) || r.Model != "" ||
		!strings.HasPrefix(r.Prompt, "You are a senior code reviewer") || !strings.HasSuffix(r.Path, "code-reviewer.md") {
		t.Errorf("code-reviewer %+v", r)
	}
	f, err := Parse([]byte("---\nname: finder\ndescription: Finds files.\ntools:\n  - Glob\n  - mcp__docs__search\nmodel: haiku\n---\nFind.\n"))
	if err != nil || !slices.Equal(f.Tools, []string{"glob", "mcp__docs__search"}) || f.Model != "haiku" || f.Prompt != "Find." {
		t.Errorf("list of tools: %+v, %v", f, err)
	}
	if none, err := Parse([]byte("---\nname: none\ndescription: No tools.\ntools: \"\"\n---\n")); err != nil || none.Tools == nil || len(none.Tools) != 0 {
		t.Errorf("an empty tools field gives no tools: %#v, %v", none.Tools, err)
	}
	for _, bad := range []string{"name: '!!'\ndescription: x", "name: x", "name: x\ndescription: y\ntools: {a: b}"} {
		if _, err := Parse([]byte("---\n" + bad + "\n---\n")); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// A project's agent file that links out of the repository is not read.
func TestProjectAgentsStayInside(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(out, "evil.md"), "---\nname: evil\ndescription: Outside.\n---\n")
	if err := os.MkdirAll(filepath.Join(root, ".dsh/agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "evil.md"), filepath.Join(root, ".dsh/agents/evil.md")); err != nil {
		t.Fatal(err)
	}
	got, err := All([]Dir{{Path: filepath.Join(root, ".dsh/agents"), Root: root}})
	if len(got) != 0 || err == nil {
		t.Errorf("agents %+v, error %v: a link out of the repository was followed", got, err)
	}
}

// A collection of 250 agents in subfolders is read whole; what the model is
// told of them is bounded (an untrusted repository's more), the rest said
// once; each is marked as the repository's, and an untrusted agent file
// cannot choose the subagent's model. Once the project is trusted, they keep
// their model.
func TestManyAgentsBudget(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("Use this agent for everything. ", 30)
	const n = 250
	for i := range n {
		name := fmt.Sprintf("repo-%03d", i)
		write(t, filepath.Join(root, ".claude/agents", fmt.Sprintf("group-%d", i%5), name+".md"), "---\nname: "+name+"\ndescription: "+long+"\nmodel: opus\n---\nDo it.\n")
	}
	size := len("repo-000") + len(strings.TrimSpace(long)) + 4
	tests := []struct {
		trusted bool
		listed  int
		model   string
	}{
		{false, frontmatter.UntrustedBudget / size, ""},
		{true, frontmatter.Budget / size, "opus"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("trusted=", tt.trusted), func(t *testing.T) {
			dirs := Dirs(root, func(string) string { return "" })
			for i := range dirs {
				dirs[i].Trusted = dirs[i].Root != "" && tt.trusted
			}
			as, err := All(dirs)
			if len(as) != n {
				t.Fatalf("%d agents found, want %d", len(as), n)
			}
			for _, a := range as {
				if a.Model != tt.model || !a.Repo || a.Untrusted == tt.trusted {
					t.Errorf("%s: model %q, repository's %v, untrusted %v; want %q, true", a.Name, a.Model, a.Repo, a.Untrusted, tt.model)
				}
			}
			if told := err != nil && strings.Contains(err.Error(), `model "opus" ignored`); told == tt.trusted {
				t.Errorf("error %v; want it to tell the model ignored: %v", err, !tt.trusted)
			}
			listed, notice := Listed(as)
			if len(listed) != tt.listed || !strings.Contains(notice, fmt.Sprintf("%d custom agents are not listed", n-tt.listed)) {
				t.Errorf("%d listed, notice %q; want %d", len(listed), notice, tt.listed)
			}
		})
	}
}

// Agent files as Claude Code collections write them: an unquoted
// description holding "Examples:" with user/assistant lines, a display name,
// a description past 1,024 bytes, disallowedTools, a YAML list of quoted
// tools after the examples.
func TestLenientAgentFiles(t *testing.T) {
	examples := "---\nname: Test Runner\ndescription: Use this agent when tests must run. Examples:\n\n<example>\nContext: the user changed code\nuser: \"run the tests\"\nassistant: \"I will use the test runner.\"\n</example>\nmodel: inherit\ncolor: green\ntools: [\"Read\", \"Bash\"]\ndisallowedTools: Write, Edit\n---\nRun them.\n"
	a, err := Parse([]byte(examples))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "test-runner" || a.Display != "Test Runner" || !strings.Contains(a.Description, `user: "run the tests"`) ||
		!slices.Equal(a.Tools, []string{"read", "bash"}) || !slices.Equal(a.Disallowed, []string{"write", "edit"}) || a.Prompt != "Run them." {
		t.Errorf("agent %+v", a)
	}
	long, err := Parse([]byte("---\nname: long\ndescription: " + strings.Repeat("word ", 400) + "\n---\n"))
	if err != nil || len(long.Description) > 1024 || !strings.HasSuffix(long.Description, "…") {
		t.Errorf("long description: %d bytes, %v", len(long.Description), err)
	}
	plugin := t.TempDir()
	write(t, filepath.Join(plugin, "agents", "sub", "helper.md"), "---\nname: helper\ndescription: helps\n---\nRun ${CLAUDE_PLUGIN_ROOT}/bin/help.\n")
	as, err := All([]Dir{{Path: filepath.Join(plugin, "agents"), Namespace: "kit", Vars: map[string]string{"CLAUDE_PLUGIN_ROOT": plugin}}})
	if err != nil || len(as) != 1 || as[0].Name != "kit:helper" || as[0].Prompt != "Run "+plugin+"/bin/help." {
		t.Errorf("a plugin's agent in a subfolder: %+v, %v", as, err)
	}
	unnamed, err := parse([]byte("---\ndescription: d\n---\n"), "from-file")
	if err != nil || unnamed.Name != "from-file" {
		t.Errorf("an agent without a name is named by its file: %+v, %v", unnamed, err)
	}
}
