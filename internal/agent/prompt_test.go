package agent

import (
	"github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/toolset"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/tool"
)

func TestLoadInstructions(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"none", nil, ""},
		{"agents", map[string]string{"AGENTS.md": "use tabs"}, "use tabs"},
		{"claude", map[string]string{"CLAUDE.md": "use spaces"}, "use spaces"},
		{"agents wins", map[string]string{"AGENTS.md": "use tabs", "CLAUDE.md": "use spaces"}, "use tabs"},
		{"only at the root", map[string]string{"sub/AGENTS.md": "nested"}, ""},
		{"capped", map[string]string{"AGENTS.md": strings.Repeat("a", MaxInstructions+1)},
			strings.Repeat("a", MaxInstructions) + "\n\n[… the file is longer than 64 KiB; the rest was left out]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadInstructions(root)
			if err != nil || got != tt.want {
				t.Errorf("LoadInstructions = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLoadInstructionsUnreadable(t *testing.T) {
	root := t.TempDir()
	// A directory named AGENTS.md cannot be read as a file: that is an error, not "none".
	if err := os.Mkdir(filepath.Join(root, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadInstructions(root); err == nil {
		t.Error("no error for an unreadable AGENTS.md")
	}
}

func TestSystemPrompt(t *testing.T) {
	root := t.TempDir()
	agents := "# House rules\n\nRun `make check` before you finish.\n"
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(agents), 0o644); err != nil {
		t.Fatal(err)
	}
	instr, err := LoadInstructions(root)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, tl := range toolset.New(toolset.Options{}).Tools() {
		if g := tl.Guidance(); g != "" {
			all = append(all, g)
		}
	}
	date := time.Date(2031, time.April, 5, 23, 30, 0, 0, time.UTC)
	got := SystemPrompt(PromptInfo{Root: root, Platform: "linux/amd64", Date: date, Instructions: instr, Guidance: all})
	for _, want := range []string{
		"Workspace root: " + root,
		"Platform: linux/amd64",
		"2031-04-05 (Saturday)",
		"# Project instructions",
		"Run `make check` before you finish.",
		"**read**", "**edit**", "**write**", "**bash**", "**todo_write**",
		"job_output", "job_kill", "job_list", "run_in_background",
		"refused", // edits of unread files
	} {
		if !strings.Contains(got, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if i, j := strings.Index(got, "# Using the tools well"), strings.Index(got, "# Project instructions"); i < 0 || j < i {
		t.Errorf("the project's instructions must follow the general guidance")
	}
	if strings.Contains(got, "{{") || strings.Contains(got, "<no value>") {
		t.Errorf("template residue in:\n%s", got)
	}

	// Guidance is given only for the tools offered, and no instructions, no heading.
	bare := SystemPrompt(PromptInfo{Root: root, Platform: "linux/amd64", Date: date, Guidance: []string{fs.Read().Guidance()}})
	for _, absent := range []string{"**bash**", "**edit**", "todo_write", "# Project instructions"} {
		if strings.Contains(bare, absent) {
			t.Errorf("read-only prompt mentions %q", absent)
		}
	}
	if !strings.Contains(bare, "**read**") {
		t.Error("read-only prompt lacks the read guidance")
	}
}

func TestSessionPrompt(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Always run make check."), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &probe{run: func(context.Context, string, string) tool.Result { return tool.Text("") }}
	got, err := SessionPrompt(root, tool.NewRegistry(p.tools()...), time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{root, "2026-03-04", "Always run make check."} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	// Guidance is given only for tools the registry offers.
	if strings.Contains(got, "**todo_write**") {
		t.Error("the prompt explains todo_write, which this registry does not offer")
	}
}

// A value that looks like a placeholder is the user's text, not the prompt's:
// it goes in as it is, and the empty instructions leave no section behind.
func TestSystemPromptTakesValuesLiterally(t *testing.T) {
	date := time.Date(2031, time.April, 5, 0, 0, 0, 0, time.UTC)
	got := SystemPrompt(PromptInfo{Root: "/w/{{.Platform}}", Platform: "linux/amd64", Date: date,
		Instructions: "Quote {{.Root}} as is.", Guidance: []string{"- one {{.Date}}", "- two"}})
	for _, want := range []string{"- Workspace root: /w/{{.Platform}} (", "Quote {{.Root}} as is.",
		"# Using the tools well\n\n- one {{.Date}}\n- two\n- You can make", "2031-04-05 (Saturday)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "above:\n\nQuote {{.Root}} as is.\n") {
		t.Errorf("the instructions do not end the prompt:\n%s", got)
	}
	bare := SystemPrompt(PromptInfo{Root: "/w", Date: date, Instructions: "\n  \n"})
	if !strings.HasSuffix(bare, "pushing).\n") || strings.Contains(bare, "{{") {
		t.Errorf("blank instructions left a section or a placeholder:\n%s", bare)
	}
}
