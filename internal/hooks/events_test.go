package hooks

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
)

// Each event's stdin holds the members Claude Code's hooks reference gives it.
func TestInputPerEvent(t *testing.T) {
	base := Input{SessionID: "s", TranscriptPath: "/t.jsonl", Cwd: "/w", PermissionMode: "default"}
	call := func(e Event) Input {
		in := base
		in.Event, in.Tool, in.DshTool, in.ToolInput, in.CallID = e, "Bash", "bash", jsontext.Value(`{"command":"ls"}`), "toolu_1"
		return in
	}
	common := `"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default",`
	for _, tc := range []struct {
		in   func() Input
		want string
	}{
		{func() Input { return call(PreToolUse) }, `"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"`},
		{func() Input { return call(PermissionRequest) }, `"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}`},
		{func() Input {
			in := call(PostToolUse)
			in.Response = jsontext.Value(`{"stdout":"a\n","stderr":"","interrupted":false,"isImage":false}`)
			return in
		}, `"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\n","stderr":"","interrupted":false,"isImage":false},"tool_use_id":"toolu_1"`},
		{func() Input {
			in := call(PostToolUseFailure)
			in.Error, in.Interrupted = "exit status 1", true
			return in
		}, `"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","error":"exit status 1","is_interrupt":true`},
		{func() Input {
			in := base
			in.Event, in.Message, in.NotificationType = Notification, "dsh needs you", "permission_prompt"
			return in
		}, `"hook_event_name":"Notification","message":"dsh needs you","notification_type":"permission_prompt"`},
		{func() Input { in := base; in.Event, in.Prompt = UserPromptSubmit, "hi"; return in }, `"hook_event_name":"UserPromptSubmit","prompt":"hi"`},
		{func() Input { in := base; in.Event, in.StopHookActive = Stop, true; return in }, `"hook_event_name":"Stop","stop_hook_active":true`},
		{func() Input {
			in := base
			in.Event, in.AgentID, in.AgentType = SubagentStart, "child", "explore"
			return in
		},
			`"hook_event_name":"SubagentStart","agent_id":"child","agent_type":"explore"`},
		{func() Input {
			in := base
			in.Event, in.AgentID, in.AgentType, in.AgentTranscriptPath = SubagentStop, "child", "reviewer", "/c.jsonl"
			return in
		}, `"hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"child","agent_type":"reviewer","agent_transcript_path":"/c.jsonl"`},
		{func() Input { in := base; in.Event, in.Trigger = PreCompact, "manual"; return in },
			`"hook_event_name":"PreCompact","trigger":"manual","custom_instructions":""`},
		{func() Input { in := base; in.Event, in.Source = SessionStart, "compact"; return in }, `"hook_event_name":"SessionStart","source":"compact"`},
		{func() Input { in := base; in.Event, in.Reason = SessionEnd, "other"; return in }, `"hook_event_name":"SessionEnd","reason":"other"`},
	} {
		in := tc.in()
		got, err := in.json()
		if err != nil {
			t.Fatal(err)
		}
		if want := "{" + common + tc.want + "}"; string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", in.Event, got, want)
		}
	}
}

// Each event's matcher is matched against what Claude Code matches it to.
func TestMatchersPerEvent(t *testing.T) {
	for _, tc := range []struct {
		in      Input
		matcher string
		want    bool
	}{
		{Input{Event: PermissionRequest, Tool: "Bash", DshTool: "bash"}, "Bash", true},
		{Input{Event: PostToolUseFailure, Tool: "Edit", DshTool: "edit"}, "Write|Edit", true},
		{Input{Event: PostToolUseFailure, Tool: "Read", DshTool: "read"}, "Write|Edit", false},
		{Input{Event: PreCompact, Trigger: "auto"}, "manual", false},
		{Input{Event: PreCompact, Trigger: "manual"}, "manual", true},
		{Input{Event: SessionEnd, Reason: "other"}, "clear", false},
		{Input{Event: SessionStart, Source: "compact"}, "compact", true},
		{Input{Event: SubagentStop, AgentType: "reviewer"}, "reviewer", true},
		{Input{Event: SubagentStart, AgentType: "explore"}, "reviewer", false},
		{Input{Event: Stop}, "ignored", true}, // Stop has no matcher
	} {
		o, _ := run(t, tc.in, Hook{Event: tc.in.Event, Matcher: tc.matcher, Command: "true"})
		if got := len(o.Runs) == 1; got != tc.want {
			t.Errorf("%s %q: ran %v, want %v", tc.in.Event, tc.matcher, got, tc.want)
		}
	}
}

func TestInterpretNewEvents(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		event                     Event
		res                       result
		decision, reason, context string
		updated                   string
	}{
		{"PreToolUse updatedInput", PreToolUse, result{stdout: `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -a"}}}`}, "allow", "", "", `{"command":"ls -a"}`},
		{"PreToolUse deny drops updatedInput", PreToolUse, result{stdout: `{"hookSpecificOutput":{"permissionDecision":"deny","updatedInput":{"command":"x"}}}`}, "deny", "", "", ""},
		{"PreToolUse updatedInput not an object", PreToolUse, result{stdout: `{"hookSpecificOutput":{"updatedInput":"x"}}`}, "", "", "", ""},
		{"PermissionRequest allow", PermissionRequest, result{stdout: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"a":1}}}}`}, "allow", "", "", `{"a":1}`},
		{"PermissionRequest deny", PermissionRequest, result{stdout: `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"no"}}}`}, "deny", "no", "", ""},
		{"PermissionRequest deny and interrupt", PermissionRequest, result{stdout: `{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":true}}}`}, "stop", "", "", ""},
		{"PermissionRequest exit 2", PermissionRequest, result{code: 2, stderr: "nope"}, "deny", "nope", "", ""},
		{"PostToolUseFailure exit 2 tells the model", PostToolUseFailure, result{code: 2, stderr: "try -v"}, "", "", "PostToolUseFailure hook on Bash feedback:\ntry -v", ""},
		{"PostToolUseFailure context", PostToolUseFailure, result{stdout: `{"hookSpecificOutput":{"additionalContext":"flaky"}}`}, "", "", "PostToolUseFailure hook additional context:\nflaky", ""},
		{"SubagentStop block", SubagentStop, result{stdout: `{"decision":"block","reason":"also check tests"}`}, "block", "also check tests", "SubagentStop hook feedback:\nalso check tests", ""},
		{"SubagentStart context", SubagentStart, result{stdout: `{"hookSpecificOutput":{"additionalContext":"use pnpm"}}`}, "", "", "SubagentStart hook additional context:\nuse pnpm", ""},
		{"PreCompact exit 2 blocks nothing", PreCompact, result{code: 2, stderr: "x"}, "", "", "", ""},
		{"SessionEnd adds nothing", SessionEnd, result{stdout: `{"hookSpecificOutput":{"additionalContext":"x"}}`}, "", "", "", ""},
	} {
		rec := session.Hook{Event: string(tc.event)}
		if toolEvent(tc.event) {
			rec.Tool = "Bash"
		}
		got, updated := interpret(rec, tc.res)
		if got.Decision != tc.decision || got.Reason != tc.reason || got.Context != tc.context || string(updated) != tc.updated {
			t.Errorf("%s: got %q %q %q %s", tc.name, got.Decision, got.Reason, got.Context, updated)
		}
	}
}

// A prompt hook asks the model with $ARGUMENTS the input; {"ok": false}
// blocks with its reason, {"ok": true} decides nothing, anything else is an
// error that decides nothing.
func TestPromptHook(t *testing.T) {
	for _, tc := range []struct {
		answer   string
		err      error
		decision string
		reason   string
		failed   bool
	}{
		{`{"ok": false, "reason": "the tests were not run"}`, nil, "block", "the tests were not run", false},
		{"```json\n{\"ok\": true}\n```", nil, "", "", false},
		{`{"decision": "block", "reason": "older format"}`, nil, "block", "older format", false},
		{`I think it is fine`, nil, "", "", true},
		{"", errors.New("rate limited"), "", "", true},
	} {
		var asked string
		ask := func(_ context.Context, q string) (string, error) { asked = q; return tc.answer, tc.err }
		r, err := New([]Hook{{Event: Stop, Type: "prompt", Prompt: "Is the work done? Input: $ARGUMENTS"}}, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		o := r.Run(t.Context(), Input{Event: Stop, SessionID: "s1"}, ask)
		if !strings.Contains(asked, `Is the work done? Input: {"session_id":"s1",`) || !strings.Contains(asked, `"hook_event_name":"Stop"`) {
			t.Errorf("asked %q", asked)
		}
		h := o.Runs[0]
		if o.Decision != tc.decision || o.Reason != tc.reason || (h.Error != "") != tc.failed || !strings.HasPrefix(h.Command, "prompt: ") {
			t.Errorf("%q: outcome %q %q, record %+v", tc.answer, o.Decision, o.Reason, h)
		}
	}
	r, _ := New([]Hook{{Event: Stop, Type: "prompt", Prompt: "done?"}}, t.TempDir(), nil)
	if h := r.Run(t.Context(), Input{Event: Stop}, nil).Runs[0]; h.Error != "no model to ask" || h.ExitCode != -1 {
		t.Errorf("without a model: %+v", h)
	}
}

// An http hook POSTs the input; only the allowed variables reach its
// headers; a 2xx body decides as a command's stdout, other statuses decide
// nothing.
func TestHTTPHook(t *testing.T) {
	type seen struct{ auth, other, ctype, body string }
	got := make(chan seen, 1)
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Header.Get("Authorization"), r.Header.Get("X-Other"), r.Header.Get("Content-Type"), string(b)}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy server says no"}}`)
	}))
	defer srv.Close()
	env := []string{"TOKEN=t0k3n", "SECRET=s3cret"}
	r, err := New([]Hook{{Event: PreToolUse, Type: "http", URL: srv.URL + "/check",
		Headers:        map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Other": "[$SECRET]"},
		AllowedEnvVars: []string{"TOKEN"}}}, t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Event: PreToolUse, Tool: "Bash", DshTool: "bash", ToolInput: jsontext.Value(`{"command":"ls"}`)}
	o := r.Run(t.Context(), in, nil)
	s := <-got
	if s.auth != "Bearer t0k3n" || s.other != "[]" || s.ctype != "application/json" {
		t.Errorf("headers: %+v", s)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(s.body), &body); err != nil || body["hook_event_name"] != "PreToolUse" || body["tool_name"] != "Bash" {
		t.Errorf("body %s (%v)", s.body, err)
	}
	if o.Decision != "deny" || o.Reason != "policy server says no" || !strings.HasPrefix(o.Runs[0].Command, "POST ") {
		t.Errorf("outcome %+v", o)
	}
	status = http.StatusInternalServerError
	o = r.Run(t.Context(), in, nil)
	<-got
	if h := o.Runs[0]; o.Decision != "" || !strings.Contains(h.Error, "500") {
		t.Errorf("a failing server decided: %+v", o)
	}
}

func TestMain(m *testing.M) {
	// The http hook test's server is on loopback; a proxy in the
	// environment must not take its requests.
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"} {
		_ = os.Unsetenv(k)
	}
	os.Exit(m.Run())
}

// A hook's own variables (a plugin's CLAUDE_PLUGIN_ROOT) reach its command.
func TestHookEnv(t *testing.T) {
	o, _ := run(t, Input{Event: Stop}, Hook{Event: Stop, Command: `echo "$CLAUDE_PLUGIN_ROOT"`, Env: []string{"CLAUDE_PLUGIN_ROOT=/plugins/fmt"}},
		Hook{Event: Stop, Command: `echo "[$CLAUDE_PLUGIN_ROOT]"`})
	if o.Runs[0].Output != "/plugins/fmt" || o.Runs[1].Output != "[]" {
		t.Errorf("outputs %q, %q", o.Runs[0].Output, o.Runs[1].Output)
	}
}
