package acp_test

import (
	"errors"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestSteer sends a prompt with _meta "dsh.dev/steer" while a turn runs: the
// model gets it at the turn's next step (after the call's result), logged as
// the user's message there, and its answer is the turn's; no second turn
// runs.
func TestSteer(t *testing.T) {
	c := start(t, options{mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "Steered."},
	)})
	id := c.newSession()
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		c.waitFor("the steering notice", func(l string) bool { return strings.Contains(l, "Steering: this prompt reaches the model") })
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}
	}
	first := make(chan error, 1)
	go func() {
		got, err := c.prompt(id, "Write notes.")
		if err == nil && got != sdk.StopReasonEndTurn {
			err = errors.New("stopped with " + string(got))
		}
		first <- err
	}()
	c.waitFor("the permission request", func(l string) bool { return strings.Contains(l, `"session/request_permission"`) })
	resp, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("Use British spelling.")},
		Meta: map[string]any{"dsh.dev/steer": true}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the steering prompt: %+v, %v", resp, err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the running prompt: %v", err)
	}
	var seq []string
	for _, r := range records(t, c, id) {
		switch r.Type {
		case session.TypeUser, session.TypeAssistant:
			seq = append(seq, r.Text)
		case session.TypeToolResult:
			seq = append(seq, "result "+r.CallID)
		case session.TypeTurnEnd:
			seq = append(seq, "end")
		case session.TypeHeader, session.TypeThinking, session.TypeToolCall, session.TypeProgress,
			session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
			session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand,
			session.TypeReply, session.TypeDamaged, session.TypeDecision, session.TypeTitle:
		}
	}
	if got, want := strings.Join(seq, " | "), "Write notes. | result w1 | Use British spelling. | Steered. | end"; got != want {
		t.Errorf("the log holds %q, want %q", got, want)
	}
	t.Logf("steer: %s", strings.Join(seq, " | "))
}
