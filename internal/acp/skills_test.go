package acp_test

import (
	"github.com/dsh-dev/dsh/internal/attach"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// claudeSkill is a skill as Claude Code's users write it (its extra front
// matter keys included), used unchanged.
const claudeSkill = `---
name: release-notes
description: Write release notes from the git log. Use when asked for release notes or a changelog.
allowed-tools: Bash(git log:*)
---
# Release notes

1. Read templates/notes.md.
2. Group the changes under Added, Fixed and Changed.
`

// TestSkills: a project's .claude/skills folder is offered as it is — listed
// in the system prompt, a slash command in available_commands_update, loaded
// by the model with the skill tool (a card whose content is the body), and a
// file of its folder loaded on request.
func TestSkills(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".claude", "skills", "release-notes")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(claudeSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes.md"), []byte("## Added\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{cwd: cwd, script: script(t,
		turn{ToolCalls: []call{{ID: "s1", Name: "skill", Args: map[string]any{"name": "release-notes"}}}},
		turn{ToolCalls: []call{{ID: "s2", Name: "skill", Args: map[string]any{"name": "release-notes", "file": "templates/notes.md"}}}},
		turn{Text: "Here are the notes."})})
	id := c.newSession()
	c.mustPrompt(id, "/release-notes for v2", sdk.StopReasonEndTurn)

	var offered bool
	c.mu.Lock()
	for _, u := range c.updates {
		if a := u.Update.AvailableCommandsUpdate; a != nil {
			for _, cmd := range a.AvailableCommands {
				offered = offered || cmd.Name == "release-notes" && strings.HasPrefix(cmd.Description, "Write release notes")
			}
		}
	}
	c.mu.Unlock()
	if !offered {
		t.Error("the skill is not a slash command")
	}
	results := map[string]string{}
	var system, user string
	for _, r := range records(t, c, id) {
		switch r.Type { //nolint:exhaustive // only what the test checks
		case session.TypeHeader:
			system = r.System
		case session.TypeUser:
			user = attach.ModelText(r.Text, r.Content) // what the model is sent
		case session.TypeToolResult:
			if r.Result.IsError {
				t.Errorf("%s failed: %s", r.CallID, r.Result.TextOf())
			}
			results[r.CallID] = r.Result.TextOf()
		}
	}
	if !strings.Contains(system, "- release-notes: Write release notes from the git log.") {
		t.Errorf("the system prompt does not list the skill:\n%s", system)
	}
	// Run by name, the skill's body is the prompt, saying where its folder is.
	if user != "Base directory for this skill: "+dir+" (run its scripts from there)\n\n# Release notes\n\n1. Read templates/notes.md.\n2. Group the changes under Added, Fixed and Changed.\n\nfor v2" {
		t.Errorf("the slash command became %q", user)
	}
	if !strings.Contains(results["s1"], "Group the changes under Added") || !strings.Contains(results["s1"], "templates/notes.md") {
		t.Errorf("the skill's body: %q", results["s1"])
	}
	if results["s2"] != "## Added\n" {
		t.Errorf("the skill's file: %q", results["s2"])
	}
}
