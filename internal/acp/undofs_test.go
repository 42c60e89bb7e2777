package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestUndoThroughEditor: with a client that offers its files, /undo reads
// what the editor holds (fs/read_text_file) before deciding what the user
// changed, and writes what it puts back through the editor
// (fs/write_text_file), so the editor's review sees the undo as it saw the
// edit. A change the user made in an unsaved buffer is kept, as one saved on
// the disk is, until --overwrite.
func TestUndoThroughEditor(t *testing.T) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(cwd, "notes.txt")
	if err := os.WriteFile(notes, []byte("colour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(id string) []turn {
		return []turn{{ToolCalls: []call{{ID: "r" + id, Name: "read", Args: map[string]any{"path": "notes.txt"}}}},
			{ToolCalls: []call{{ID: "e" + id, Name: "edit", Args: map[string]any{"path": "notes.txt", "old_string": "colour", "new_string": "color"}}}}}
	}
	turns := append(append(append(edit("1"), turn{Text: "Done."}), edit("2")...), turn{Text: "Done again."})
	ed := &editor{buffers: map[string]string{}}
	c := start(t, options{cwd: cwd, editor: ed, script: script(t, turns...)})
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	id := c.newSession()
	type fsCall struct{ reads, writes int }
	state := func() (fsCall, []string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		var ws []string
		for _, w := range ed.writes {
			ws = append(ws, filepath.Base(w.Path)+"="+strings.TrimSpace(w.Content))
		}
		return fsCall{len(ed.reads), len(ed.writes)}, ws
	}
	disk := func() string {
		b, err := os.ReadFile(notes)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	c.mustPrompt(id, "Spell it the American way.", sdk.StopReasonEndTurn)
	before, _ := state()
	mark := len(c.out.all())
	c.mustPrompt(id, "/undo", sdk.StopReasonEndTurn)
	after, writes := state()
	if after.reads <= before.reads {
		said := c.out.all()[mark:]
		t.Errorf("/undo did not read what the editor holds (%d reads before, %d after); dsh said:\n%s", before.reads, after.reads, strings.Join(said, "\n"))
	}
	if want := []string{"notes.txt=color", "notes.txt=colour"}; !slices.Equal(writes, want) {
		t.Errorf("writes through the editor %q, want the edit then the undo %q", writes, want)
	}
	if got := disk(); got != "colour\n" {
		t.Errorf("notes.txt = %q after /undo", got)
	}
	t.Logf("undo through fs/*: fs/read_text_file %d → %d, fs/write_text_file %q", before.reads, after.reads, writes)

	// The agent edits again; the user changes the buffer without saving.
	c.mustPrompt(id, "Again.", sdk.StopReasonEndTurn)
	c.mu.Lock()
	ed.buffers[notes] = "colour, the user's\n"
	c.mu.Unlock()
	c.mustPrompt(id, "/undo", sdk.StopReasonEndTurn)
	c.waitFor("the reply that keeps the user's change", func(l string) bool {
		return strings.Contains(l, "Nothing was undone: you changed notes.txt since")
	})
	if _, writes := state(); len(writes) != 3 || disk() != "color\n" {
		t.Errorf("/undo wrote over the user's unsaved change: %q, disk %q", writes, disk())
	}
	c.mustPrompt(id, "/undo --overwrite", sdk.StopReasonEndTurn)
	_, writes = state()
	if len(writes) != 4 || writes[3] != "notes.txt=colour" || disk() != "colour\n" {
		t.Errorf("/undo --overwrite: writes %q, disk %q", writes, disk())
	}
	c.mu.Lock()
	buf := ed.buffers[notes]
	c.mu.Unlock()
	if buf != "colour\n" {
		t.Errorf("the editor holds %q after /undo --overwrite", buf)
	}
}
