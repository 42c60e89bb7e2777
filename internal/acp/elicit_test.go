package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestElicitation: a client that takes form elicitations is asked ask_user's
// question and the plan's hand-off as elicitation/create forms scoped to the
// session and the call — a field of the choices, and one for the user's own
// words — and never as permission requests; what the user entered is the
// answer, declining is none, and a form whose turn is cancelled is cancelled
// by its id.
func TestElicitation(t *testing.T) {
	askUser := turn{ToolCalls: []call{{ID: "q1", Name: "ask_user", Args: map[string]any{"question": "Which database?",
		"options": []map[string]any{{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}}}}}}
	accept := func(content map[string]any) sdk.UnstableCreateElicitationResponse {
		return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: "accept", Content: content}}
	}
	for _, tc := range []struct {
		name   string
		mode   string
		turns  []turn
		answer sdk.UnstableCreateElicitationResponse
		result string // the question's result, as the model reads it
		field  string // the form's choices field holds this choice
	}{
		{"a choice", "bypass", []turn{askUser, {Text: "ok"}}, accept(map[string]any{"answer": "2"}), "The user chose: Postgres", "1=SQLite"},
		{"own words", "bypass", []turn{askUser, {Text: "ok"}}, accept(map[string]any{"answer": "1", "other": "MySQL, please"}),
			"The user answered in their own words:\n\nMySQL, please", "2=Postgres"},
		{"declined", "bypass", []turn{askUser, {Text: "ok"}},
			sdk.UnstableCreateElicitationResponse{Decline: &sdk.UnstableCreateElicitationDecline{Action: "decline"}}, "The user chose none", ""},
		{"the plan's hand-off", "plan", []turn{
			{ToolCalls: []call{{ID: "q1", Name: "plan", Args: map[string]any{"plan": "# Notes\n\nWrite notes.txt.", "files": []string{"notes.txt"}}}}},
			{Text: "ok"}}, accept(map[string]any{"answer": "accept-edits"}), "The user approved the plan. The session is now in accept-edits mode", "accept-edits="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := start(t, options{mode: tc.mode, forms: true, script: script(t, tc.turns...)})
			c.elicit = func(context.Context, sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse {
				return tc.answer
			}
			id := c.newSession()
			c.mustPrompt(id, "Set up.", sdk.StopReasonEndTurn)
			var res string
			for _, r := range records(t, c, id) {
				if r.Type == session.TypeToolResult && r.CallID == "q1" {
					res = r.Result.TextOf()
				}
			}
			if !strings.HasPrefix(res, tc.result) {
				t.Errorf("the model read %q, want %q…", res, tc.result)
			}
			c.mu.Lock()
			asked, elicited := len(c.asked), len(c.elicited)
			c.mu.Unlock()
			if asked != 0 || elicited != 1 {
				t.Fatalf("%d permission requests and %d elicitations, want one elicitation", asked, elicited)
			}
			req := c.waitFor("the elicitation", func(l string) bool { return strings.Contains(l, `"method":"elicitation/create"`) })
			var m struct {
				Params struct {
					SessionID       string `json:"sessionId"`
					ToolCallID      string `json:"toolCallId"`
					Mode            string `json:"mode"`
					Message         string `json:"message"`
					RequestedSchema struct {
						Properties map[string]struct {
							OneOf []struct{ Const, Title string } `json:"oneOf"`
						} `json:"properties"`
					} `json:"requestedSchema"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(req), &m); err != nil {
				t.Fatal(err)
			}
			p := m.Params
			if p.SessionID != string(id) || p.ToolCallID != "q1" || p.Mode != "form" || p.Message == "" {
				t.Errorf("the elicitation's scope: %s", req)
			}
			var choices []string
			for _, o := range p.RequestedSchema.Properties["answer"].OneOf {
				choices = append(choices, o.Const+"="+o.Title)
			}
			if _, other := p.RequestedSchema.Properties["other"]; !other || !strings.Contains(strings.Join(choices, " "), tc.field) {
				t.Errorf("the form's fields: %s", req)
			}
			t.Logf("elicitation/create: %s", req)
		})
	}
}

// TestElicitationCancelled: the turn is cancelled while the form waits; dsh
// cancels the elicitation by its id.
func TestElicitationCancelled(t *testing.T) {
	c := start(t, options{forms: true, script: script(t,
		turn{ToolCalls: []call{{ID: "q1", Name: "ask_user", Args: map[string]any{"question": "Which database?",
			"options": []map[string]any{{"label": "SQLite"}, {"label": "Postgres"}}}}}},
		turn{Text: "never reached"})})
	id := c.newSession()
	cancelled := make(chan error, 1)
	c.elicit = func(ctx context.Context, _ sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse {
		if err := c.conn.Cancel(c.ctx(), sdk.CancelNotification{SessionId: id}); err != nil {
			t.Error(err)
		}
		<-ctx.Done() // dsh's $/cancel_request
		cancelled <- ctx.Err()
		return sdk.UnstableCreateElicitationResponse{Cancel: &sdk.UnstableCreateElicitationCancel{Action: "cancel"}}
	}
	c.mustPrompt(id, "Set up.", sdk.StopReasonCancelled)
	if err := <-cancelled; err == nil {
		t.Error("the form's context did not end")
	}
	req := c.waitFor("the elicitation", func(l string) bool { return strings.Contains(l, `"method":"elicitation/create"`) })
	var m struct{ ID string }
	if err := json.Unmarshal([]byte(req), &m); err != nil {
		t.Fatal(err)
	}
	c.waitFor("dsh's $/cancel_request of the form", func(l string) bool {
		return strings.Contains(l, `"method":"$/cancel_request"`) && strings.Contains(l, `"requestId":"`+m.ID+`"`)
	})
	t.Logf("elicitation %s cancelled with $/cancel_request", m.ID)
}
