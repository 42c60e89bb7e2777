package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// Over ACP, /undo is one of the session's commands; it asks with the diff it
// will apply (a permission request on diff content) and keeps the file the
// user changed after the agent did.
func TestUndoSkipsAFileTheUserChanged(t *testing.T) {
	cwd := t.TempDir()
	for name, text := range map[string]string{"a.txt": "colour\n", "keep.txt": "v1\n"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, options{cwd: cwd, script: script(t,
		turn{ToolCalls: []call{bash("b1", "sed -i s/colour/color/ a.txt && sed -i s/v1/v2/ keep.txt && echo gen > gen.txt")}},
		turn{Text: "Done."},
	)})
	id := c.newSession()
	c.waitFor("/undo and /rewind offered", func(l string) bool {
		return strings.Contains(l, "available_commands_update") && strings.Contains(l, `"name":"undo"`) && strings.Contains(l, `"name":"rewind"`)
	})
	c.mustPrompt(id, "tidy up", sdk.StopReasonEndTurn)
	if err := os.WriteFile(filepath.Join(cwd, "keep.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	c.mu.Unlock()
	c.mustPrompt(id, "/undo", sdk.StopReasonEndTurn)

	c.mu.Lock()
	asked := slices.Clone(c.asked)
	c.mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("dsh asked %d times, want once", len(asked))
	}
	var paths []string
	for _, cc := range asked[0].ToolCall.Content {
		if cc.Diff == nil {
			t.Fatalf("the undo's request holds %+v, want diffs only", cc)
		}
		paths = append(paths, cc.Diff.Path)
	}
	if want := []string{filepath.Join(c.cwd, "a.txt"), filepath.Join(c.cwd, "gen.txt")}; !slices.Equal(paths, want) {
		t.Errorf("the undo's diff covers %q, want %q", paths, want)
	}
	if tt := title(asked[0].ToolCall.Title); !strings.Contains(tt, "kept keep.txt") {
		t.Errorf("the request's title %q does not say keep.txt is kept", tt)
	}
	for name, want := range map[string]string{"a.txt": "colour\n", "keep.txt": "the user's\n"} {
		if b, err := os.ReadFile(filepath.Join(cwd, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cwd, "gen.txt")); !os.IsNotExist(err) {
		t.Errorf("gen.txt is still there: %v", err)
	}
	c.waitFor("the reply naming the kept file", func(l string) bool {
		return strings.Contains(l, "agent_message_chunk") && strings.Contains(l, "Kept keep.txt")
	})
}
