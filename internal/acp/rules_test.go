package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// Claude Code's permission rules in the user's ~/.claude/settings.json hold
// over ACP exactly as in the terminal (one gate, in the agent): a deny
// refuses without asking the editor and names the rule, an allow runs
// without asking, anything else is asked about.
func TestPermissionRules(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"permissions": {"allow": ["Bash(touch allowed)"], "ask": ["Bash(git push:*)"], "deny": ["Bash(rm -rf:*)"]}}`
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{mode: "default", configHome: t.TempDir(), env: []string{"HOME=" + home}, script: script(t,
		turn{ToolCalls: []call{bash("b1", "true && env X=1 rm -rf keep")}},
		turn{ToolCalls: []call{bash("b2", "touch allowed")}},
		turn{ToolCalls: []call{bash("b3", "touch other")}},
		turn{Text: "Done."},
	)})
	if err := os.Mkdir(filepath.Join(c.cwd, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	id := c.newSession()
	c.mustPrompt(id, "go", sdk.StopReasonEndTurn)
	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallId != "b3" {
		t.Errorf("the editor was asked %d times, want once, for b3 (the denied and the allowed calls ask nothing)", len(asked))
	}
	if _, err := os.Stat(filepath.Join(c.cwd, "keep")); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
	for _, f := range []string{"allowed", "other"} {
		if _, err := os.Stat(filepath.Join(c.cwd, f)); errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was not made", f)
		}
	}
	if tr := strings.Join(c.transcript(0, id), "\n"); !strings.Contains(tr, `Denied by the permission rule \"Bash(rm -rf:*)\"`) {
		t.Errorf("the editor was not told which rule denied the call:\n%s", tr)
	}
}
