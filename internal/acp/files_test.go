package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestEditorFiles runs a session in a client that offers its files and holds
// an unsaved buffer: the model reads the buffer, not the disk; its edit goes
// through fs/write_text_file (which the editor tracks for review) with the
// hunk computed against the buffer; the log and the cards are those of a disk
// edit, each result's meta saying it went through the editor. The transcript
// is golden.
func TestEditorFiles(t *testing.T) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(cwd, "notes.txt")
	if err := os.WriteFile(notes, []byte("saved line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := &editor{buffers: map[string]string{notes: "unsaved line\n"}}
	c := start(t, options{cwd: cwd, editor: ed, script: script(t,
		turn{ToolCalls: []call{{ID: "r1", Name: "read", Args: map[string]any{"path": "notes.txt"}}}},
		turn{ToolCalls: []call{{ID: "e1", Name: "edit", Args: map[string]any{"path": "notes.txt",
			"old_string": "unsaved line", "new_string": "edited line"}}}},
		turn{Text: "Edited the buffer."})})
	id := c.newSession()
	from := c.mark()
	c.mustPrompt(id, "Edit my notes.", sdk.StopReasonEndTurn)

	if len(ed.reads) == 0 || ed.reads[0] != notes {
		t.Errorf("the editor was asked for %v, want %s", ed.reads, notes)
	}
	if len(ed.writes) != 1 || ed.writes[0].Content != "edited line\n" || ed.writes[0].Path != notes || ed.writes[0].SessionId != id {
		t.Fatalf("writes through the editor: %+v", ed.writes)
	}
	var results []session.Record
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeToolResult {
			results = append(results, r)
		}
	}
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if r.Result.IsError {
			t.Errorf("%s failed: %s", r.CallID, r.Result.TextOf())
		}
		if !strings.Contains(string(r.Result.Meta), `"editor":true`) {
			t.Errorf("%s's meta does not say it went through the editor: %s", r.CallID, r.Result.Meta)
		}
	}
	if got := results[0].Result.TextOf(); !strings.Contains(got, "unsaved line") || strings.Contains(got, "saved line\n") && !strings.Contains(got, "unsaved") {
		t.Errorf("the model read %q, not the buffer", got)
	}
	golden(t, "editor_files", c.transcript(from, id))
}

// TestEditorRejectsWrite: an editor that refuses the change leaves the file
// as it was, and the model is told so and to read it again.
func TestEditorRejectsWrite(t *testing.T) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(cwd, "notes.txt")
	if err := os.WriteFile(notes, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := &editor{buffers: map[string]string{}, reject: "the user rejected the change"}
	c := start(t, options{cwd: cwd, editor: ed, script: script(t,
		turn{ToolCalls: []call{{ID: "r1", Name: "read", Args: map[string]any{"path": "notes.txt"}}}},
		turn{ToolCalls: []call{{ID: "e1", Name: "edit", Args: map[string]any{"path": "notes.txt", "old_string": "one", "new_string": "two"}}}},
		turn{Text: "It was refused."})})
	id := c.newSession()
	c.mustPrompt(id, "Change it.", sdk.StopReasonEndTurn)
	var res *session.Record
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeToolResult && r.CallID == "e1" {
			res = &r
		}
	}
	if res == nil || !res.Result.IsError || !strings.Contains(res.Result.TextOf(), "the editor refused the change: the user rejected the change") {
		t.Fatalf("the edit's result: %v %q", res.Result.IsError, res.Result.TextOf())
	}
	if b, _ := os.ReadFile(notes); string(b) != "one\n" {
		t.Errorf("the file is %q", b)
	}
}
