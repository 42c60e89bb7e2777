package agents

import (
	"slices"
	"strings"
	"testing"
)

// Every tool name of Claude Code maps to dsh's, or is left out and said so;
// its permission rules name their tool; disallowedTools is read the same way.
func TestClaudeToolNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for one dsh has not
	}{
		{"Bash", "bash"}, {"Read", "read"}, {"Write", "write"}, {"Edit", "edit"}, {"MultiEdit", "edit"},
		{"Glob", "glob"}, {"Grep", "grep"}, {"LS", "ls"}, {"WebFetch", "web_fetch"}, {"WebSearch", ""},
		{"TodoWrite", "todo_write"}, {"Task", "task"}, {"Agent", "task"}, {"NotebookEdit", ""}, {"NotebookRead", "read"},
		{"BashOutput", "job_output"}, {"KillShell", "job_kill"}, {"KillBash", "job_kill"},
		{"AskUserQuestion", "ask_user"}, {"ExitPlanMode", "plan"}, {"Skill", "skill"}, {"LSP", "diagnostics"},
		{"SlashCommand", ""}, {"ListMcpResourcesTool", ""}, {"ReadMcpResourceTool", ""},
		{"Bash(git add:*)", "bash"}, {"mcp__docs__search", "mcp__docs__search"}, {"todo_write", "todo_write"}, {"Foo", "Foo"},
	} {
		if got := ToolName(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.in, got, tc.want)
		}
	}
	a, err := Parse([]byte("---\nname: r\ndescription: d\ntools: Read, WebSearch, TodoWrite, Bash(git diff:*)\ndisallowedTools: [Write, MultiEdit, NotebookEdit]\n---\nx"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Tools, []string{"read", "todo_write", "bash"}) || !slices.Equal(a.Disallowed, []string{"write", "edit"}) ||
		len(a.Ignored) != 1 || !strings.HasPrefix(a.Ignored[0], "WebSearch") {
		t.Errorf("tools %q, disallowed %q, ignored %q", a.Tools, a.Disallowed, a.Ignored)
	}
	if only, _ := Parse([]byte("---\nname: w\ndescription: d\ntools: WebSearch\n---\n")); only.Tools == nil || len(only.Tools) != 0 {
		t.Errorf("an agent whose only tool dsh lacks gets %#v (nil is every tool)", only.Tools)
	}
}
