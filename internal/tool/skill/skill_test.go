package skill

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/skills"
	"github.com/dsh-dev/dsh/internal/tool"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The model runs a custom command or loads a skill as the user would type
// it — arguments, ${CLAUDE_SKILL_DIR}, the skill's folder said — unless its
// file sets disable-model-invocation; a command's !`cmd` is left for the
// model to run with the bash tool, where it is asked about like any call.
func TestModelRunsCommandsAndSkills(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: PDFs\n---\nRun ${CLAUDE_SKILL_DIR}/fill.py $ARGUMENTS\n")
	write(t, filepath.Join(dir, "skills/deploy/SKILL.md"), "---\nname: deploy\ndescription: deploys\ndisable-model-invocation: true\n---\nDeploy.\n")
	write(t, filepath.Join(dir, "commands/commit.md"), "---\ndescription: commit\n---\nState: !`git status`\nCommit $1 with message $2.\n")
	write(t, filepath.Join(dir, "commands/wipe.md"), "---\ndescription: wipes\ndisable-model-invocation: true\n---\nWipe.\n")
	ss, err := skills.All([]skills.Dir{{Path: filepath.Join(dir, "skills")}})
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := command.All([]command.Dir{{Path: filepath.Join(dir, "commands")}})
	if err != nil {
		t.Fatal(err)
	}
	s := tool.NewSession("test", nil)
	Offer(s, ss, cmds)
	reg := tool.NewRegistry(Tool())
	tests := []struct {
		name, args string
		want       string
		isErr      bool
	}{
		{"pdf", "form.pdf", "Base directory for this skill: " + filepath.Join(dir, "skills/pdf") + " (run its scripts from there)\n\nRun " + filepath.Join(dir, "skills/pdf") + "/fill.py form.pdf", false},
		{"/commit", "a.go 'fix: it'", "# Command /commit\n\nRun the commands it marks with the bash tool, then follow it with their output.\n\nState: [the output of `git status`: run it with the bash tool first]\nCommit a.go with message fix: it.\n", false},
		{"deploy", "", "runs only when the user types /deploy", true},
		{"wipe", "", "/wipe runs only when the user types it", true},
		{"nope", "", "There is no skill or command", true},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"name": tt.name, "arguments": tt.args})
		r, err := reg.Run(t.Context(), tool.Env{Session: s}, "skill", args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.IsError != tt.isErr || !strings.Contains(r.TextOf(), tt.want) {
			t.Errorf("%s %s: %v\n%s\nwant %q", tt.name, tt.args, r.IsError, r.TextOf(), tt.want)
		}
	}
}
