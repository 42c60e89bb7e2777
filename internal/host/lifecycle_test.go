package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/session"
)

// Each session event runs its hooks where it happens, with its input: a
// task runs SubagentStart and (not Stop) SubagentStop, told the parent's
// session and transcript and its own; /compact runs PreCompact and then
// SessionStart with source compact; closing runs SessionEnd. What
// SubagentStart adds is the subagent's context.
func TestLifecycleHooks(t *testing.T) {
	root, dir, notes := t.TempDir(), t.TempDir(), t.TempDir()
	log := filepath.Join(notes, "events")
	record := `cat >> ` + log + `; echo >> ` + log
	var hs []hooks.Hook
	for _, e := range hooks.Events {
		hs = append(hs, hooks.Hook{Event: e, Command: record})
	}
	hs = append(hs, hooks.Hook{Event: hooks.SubagentStart, Matcher: "explore",
		Command: `cat > /dev/null; echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"the build uses make"}}'`})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Look", "prompt": "TASK-L: look around"}}]},
		{"match": "TASK-L", "echo_request": true},
		{"text": "looked"},
		{"text": "the summary"}
	]}`)
	o := options(t, root, dir, p)
	o.Hooks = hs
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "look"); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(t.Context(), "keep the paths"); err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	var start, stop map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var in map[string]any
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		ev := in["hook_event_name"].(string)
		switch ev {
		case "SessionStart", "SessionEnd":
			ev += ":" + asString(in["source"]) + asString(in["reason"])
		case "PreCompact":
			ev += ":" + in["trigger"].(string) + ":" + in["custom_instructions"].(string)
		case "SubagentStart":
			start = in
		case "SubagentStop":
			stop = in
		}
		if in["session_id"] != id {
			t.Errorf("%s was told session %v, want the parent's %s", ev, in["session_id"], id)
		}
		events = append(events, ev)
	}
	want := "SessionStart:startup UserPromptSubmit PreToolUse SubagentStart SubagentStop PostToolUse Stop " +
		"PreCompact:manual:keep the paths SessionStart:compact SessionEnd:other"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("hooks ran for:\n%s\nwant:\n%s", got, want)
	}
	if start["agent_type"] != "explore" || stop["agent_type"] != "explore" || stop["agent_id"] == id || stop["agent_id"] != start["agent_id"] ||
		stop["transcript_path"] != hooks.TranscriptPath(filepath.Join(dir, id+".jsonl")) ||
		stop["agent_transcript_path"] != hooks.TranscriptPath(filepath.Join(dir, asString(stop["agent_id"])+".jsonl")) {
		t.Errorf("SubagentStart %v\nSubagentStop %v", start, stop)
	}
	// The subagent's first request held what its SubagentStart hook added.
	recs, err := session.ReadFile(filepath.Join(dir, asString(stop["agent_id"])+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var echoed string
	for _, r := range recs {
		if r.Type == session.TypeAssistant {
			echoed = r.Text
			break
		}
	}
	if !strings.Contains(echoed, "SubagentStart hook additional context:\nthe build uses make") {
		t.Errorf("the subagent's request: %s", echoed)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
