package acp_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

func optionIDs(opts []sdk.PermissionOption) []string {
	var out []string
	for _, o := range opts {
		out = append(out, string(o.OptionId)+"="+o.Name)
	}
	return out
}

// TestPlanApproved: in plan mode the write is refused; the plan tool asks
// "Implement this plan?" as a permission request on the plan card whose
// options are the modes to go on in (no auto: no sandbox here) and "keep
// planning"; choosing accept-edits sends current_mode_update and the plan's
// steps as the plan, and the write then runs unasked. Loaded, the session shows
// the same cards, and is in accept-edits.
func TestPlanApproved(t *testing.T) {
	dir := t.TempDir()
	c := start(t, options{mode: "plan", sessionDir: dir, script: script(t,
		turn{ToolCalls: []call{{ID: "w0", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "early\n"}}}},
		turn{ToolCalls: []call{{ID: "p1", Name: "plan", Args: map[string]any{"plan": "# Notes\n\nWrite notes.txt.",
			"files": []string{"notes.txt"}, "steps": []string{"Write notes.txt", "Check it"}}}}},
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "Done."},
	)})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("answer:accept-edits")}
	}
	id := c.newSession()
	c.mustPrompt(id, "Plan the notes, then write them.", sdk.StopReasonEndTurn)
	live := c.transcript(0, id)
	golden(t, "plan-approved", live)

	c.mu.Lock()
	asked, updates := c.asked, c.updates
	c.mu.Unlock()
	if len(asked) != 1 || asked[0].ToolCall.ToolCallId != "p1" {
		t.Fatalf("asked %d times (%v); want once, about the plan", len(asked), asked)
	}
	want := []string{"answer:default=Yes, and ask before each change", "answer:accept-edits=Yes, and accept file edits",
		"answer:keep=No, keep planning", "none=Answer in a message instead"}
	if got := optionIDs(asked[0].Options); !slices.Equal(got, want) {
		t.Errorf("options %q, want %q", got, want)
	}
	if k := asked[0].ToolCall.Kind; k == nil || *k != sdk.ToolKindSwitchMode {
		t.Errorf("the plan's kind is %v, want switch_mode", k)
	}
	if tc := asked[0].ToolCall.Content; len(tc) != 1 || tc[0].Content == nil || !strings.Contains(mustJSON(t, tc[0].Content), "Write notes.txt") {
		t.Errorf("the request does not show the plan: %s", mustJSON(t, tc))
	}
	var modes []string
	var plans int
	for _, u := range updates {
		if m := u.Update.CurrentModeUpdate; m != nil {
			modes = append(modes, string(m.CurrentModeId))
		}
		if p := u.Update.Plan; p != nil && len(p.Entries) == 2 && p.Entries[0].Content == "Write notes.txt" {
			plans++
		}
	}
	if !slices.Equal(modes, []string{"accept-edits"}) || plans != 1 {
		t.Errorf("mode updates %q, plan updates %d; want accept-edits and one plan", modes, plans)
	}
	if b, err := os.ReadFile(filepath.Join(c.cwd, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("notes.txt = %q, %v; want the write after the approval", b, err)
	}
	c.close()

	again := start(t, options{cwd: c.cwd, sessionDir: dir, script: script(t, turn{Text: "ok"})})
	from := again.mark()
	l, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	loaded := again.transcript(from, id)
	golden(t, "plan-approved-load", loaded)
	if lf, rf := fold(t, live), fold(t, loaded); !reflect.DeepEqual(lf["calls"], rf["calls"]) {
		t.Errorf("the reloaded cards differ from the live ones:\nlive:   %v\nloaded: %v", lf["calls"], rf["calls"])
	}
	if l.Modes == nil || l.Modes.CurrentModeId != "accept-edits" {
		t.Errorf("the loaded session's mode is %+v, want accept-edits", l.Modes)
	}
}

// TestAskUser: ask_user is a permission request whose options are the
// answers, plus one that leaves the answer to a message (the card says free
// text cannot be given here); the chosen answer is the model's result and the
// card's.
func TestAskUser(t *testing.T) {
	c := start(t, options{script: script(t,
		turn{ToolCalls: []call{{ID: "q1", Name: "ask_user", Args: map[string]any{"question": "Which database?",
			"options": []map[string]any{{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}}}}}},
		turn{Text: "Postgres it is."},
	)})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("answer:2")}
	}
	id := c.newSession()
	c.mustPrompt(id, "Set up the cache.", sdk.StopReasonEndTurn)
	golden(t, "ask-user", c.transcript(0, id))
	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	if got, want := optionIDs(asked[0].Options), []string{"answer:1=SQLite", "answer:2=Postgres", "none=Answer in a message instead"}; !slices.Equal(got, want) {
		t.Errorf("options %q, want %q", got, want)
	}
	if s := mustJSON(t, asked[0].ToolCall.Content); !strings.Contains(s, "cannot be given here") {
		t.Errorf("the question's card does not say free text is not possible: %s", s)
	}
	var res string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeToolResult && r.CallID == "q1" {
			res = r.Result.TextOf()
		}
	}
	if res != "The user chose: Postgres" {
		t.Errorf("the model read %q", res)
	}
}
