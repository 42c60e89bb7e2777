package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
)

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		matcher string
		names   []string // Claude Code's name, dsh's
		want    bool
	}{
		{"", []string{"Bash", "bash"}, true},
		{"*", []string{"", "todo_write"}, true},
		{"Bash", []string{"Bash", "bash"}, true},
		{"bash", []string{"Bash", "bash"}, true}, // dsh's own name
		{"Bash", []string{"Read", "read"}, false},
		{"Edit|Write", []string{"Write", "write"}, true},
		{"Edit|Write", []string{"Read", "read"}, false},
		{"Write", []string{"WriteFile", ""}, false}, // plain names match exactly
		{"BASH", []string{"Bash", "bash"}, false},   // case-sensitive, as in Claude Code
		{"Notebook.*", []string{"NotebookEdit", ""}, true},
		{"mcp__memory__.*", []string{"mcp__memory__create", "mcp__memory__create"}, true},
		{"mcp__.*", []string{"Bash", "bash"}, false},
		{"^(Read|Grep)$", []string{"Grep", "grep"}, true},
	} {
		m, err := compile(c.matcher)
		if err != nil {
			t.Fatalf("%q: %v", c.matcher, err)
		}
		if got := m.match(c.names...); got != c.want {
			t.Errorf("%q against %v = %v, want %v", c.matcher, c.names, got, c.want)
		}
	}
	if err := CheckMatcher("(unclosed"); err == nil {
		t.Error("a matcher that is not a regular expression was accepted")
	}
}

func TestInterpret(t *testing.T) {
	pre := session.Hook{Event: "PreToolUse", Tool: "Bash"}
	post := session.Hook{Event: "PostToolUse", Tool: "Bash"}
	prompt := session.Hook{Event: "UserPromptSubmit"}
	stop := session.Hook{Event: "Stop"}
	start := session.Hook{Event: "SessionStart"}
	for _, c := range []struct {
		name                      string
		rec                       session.Hook
		res                       result
		decision, reason, context string
	}{
		{"exit 0 decides nothing", pre, result{stdout: "looks fine\n"}, "", "", ""},
		{"exit 2 denies a call with stderr", pre, result{code: 2, stderr: "rm is not allowed\n"}, "deny", "rm is not allowed", ""},
		{"exit 1 is an error that decides nothing", pre, result{code: 1, stderr: "oops"}, "", "", ""},
		{"a timeout decides nothing", pre, result{code: -1, err: "timed out after 1s", stderr: "x"}, "", "", ""},
		{"permissionDecision allow", pre, result{stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"known"}}`}, "allow", "known", ""},
		{"permissionDecision deny", pre, result{stdout: `{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}`}, "deny", "no", ""},
		{"permissionDecision ask", pre, result{stdout: `{"hookSpecificOutput":{"permissionDecision":"ask"}}`}, "ask", "", ""},
		{"the older approve", pre, result{stdout: `{"decision":"approve","reason":"ok"}`}, "allow", "ok", ""},
		{"the older block", pre, result{stdout: `{"decision":"block","reason":"no"}`}, "deny", "no", ""},
		{"continue false stops", pre, result{stdout: `{"continue":false,"stopReason":"enough"}`}, "stop", "enough", ""},
		{"exit 2 after a call tells the model", post, result{code: 2, stderr: "lint failed"}, "block", "lint failed", "PostToolUse hook on Bash feedback:\nlint failed"},
		{"block after a call tells the model", post, result{stdout: `{"decision":"block","reason":"fix it"}`}, "block", "fix it", "PostToolUse hook on Bash feedback:\nfix it"},
		{"context after a call", post, result{stdout: `{"hookSpecificOutput":{"additionalContext":"note"}}`}, "", "", "PostToolUse hook additional context:\nnote"},
		{"a prompt's plain stdout is context", prompt, result{stdout: "today is Tuesday\n"}, "", "", "UserPromptSubmit hook additional context:\ntoday is Tuesday"},
		{"exit 2 blocks a prompt, for the user only", prompt, result{code: 2, stderr: "secret in prompt"}, "block", "secret in prompt", ""},
		{"block of a prompt", prompt, result{stdout: `{"decision":"block","reason":"no"}`}, "block", "no", ""},
		{"exit 2 at a stop keeps the turn going", stop, result{code: 2, stderr: "tests fail"}, "block", "tests fail", "Stop hook feedback:\ntests fail"},
		{"block at a stop", stop, result{stdout: `{"decision":"block","reason":"go on"}`}, "block", "go on", "Stop hook feedback:\ngo on"},
		{"a session's plain stdout is context", start, result{stdout: "branch main"}, "", "", "SessionStart hook additional context:\nbranch main"},
		{"a session's JSON context", start, result{stdout: `{"hookSpecificOutput":{"additionalContext":"ctx"}}`}, "", "", "SessionStart hook additional context:\nctx"},
		{"exit 2 at a session's start blocks nothing", start, result{code: 2, stderr: "x"}, "", "", ""},
	} {
		got, _ := interpret(c.rec, c.res)
		if got.Decision != c.decision || got.Reason != c.reason || got.Context != c.context {
			t.Errorf("%s: decision %q reason %q context %q; want %q %q %q", c.name, got.Decision, got.Reason, got.Context,
				c.decision, c.reason, c.context)
		}
	}
}

func TestOutcome(t *testing.T) {
	o := Outcome{Runs: []session.Hook{{Decision: "allow", Reason: "a"}, {Decision: "ask", Reason: "b"}, {Decision: "deny", Reason: "c"},
		{Decision: "deny", Reason: "d"}, {Decision: "allow"}}}
	o.decide()
	if o.Decision != "deny" || o.Reason != "c\nd" || o.Stop {
		t.Errorf("deny over ask over allow: got %+v", o)
	}
	o = Outcome{Runs: []session.Hook{{Decision: "allow"}, {Decision: "ask", Reason: "sure?"}}}
	o.decide()
	if o.Decision != "ask" || o.Reason != "sure?" {
		t.Errorf("ask over allow: got %+v", o)
	}
}

// run runs hooks of event in a temporary root.
func run(t *testing.T, in Input, hs ...Hook) (Outcome, string) {
	t.Helper()
	root := t.TempDir()
	r, err := New(hs, root, []string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(t.Context(), in, nil), root
}

func TestRunGivesClaudeCodesInput(t *testing.T) {
	in := Input{Event: PreToolUse, SessionID: "s1", TranscriptPath: "/logs/s1.jsonl", Cwd: "/w", PermissionMode: "accept-edits",
		Tool: "Bash", DshTool: "bash", ToolInput: jsontext.Value(`{"command":"ls"}`), CallID: "toolu_1"}
	o, root := run(t, in, Hook{Event: PreToolUse, Matcher: "Bash", Command: `cat; echo; pwd; echo "$CLAUDE_PROJECT_DIR"`})
	if len(o.Runs) != 1 {
		t.Fatalf("runs: %+v", o.Runs)
	}
	h := o.Runs[0]
	lines := strings.Split(h.Output, "\n")
	if len(lines) != 3 || h.ExitCode != 0 || h.Error != "" {
		t.Fatalf("output %q (exit %d, %s)", h.Output, h.ExitCode, h.Error)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("stdin %q: %v", lines[0], err)
	}
	want := map[string]any{"session_id": "s1", "transcript_path": "/logs/s1.jsonl", "cwd": "/w", "permission_mode": "acceptEdits",
		"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "toolu_1"}
	gb, _ := json.Marshal(got, json.Deterministic(true))
	wb, _ := json.Marshal(want, json.Deterministic(true))
	if string(gb) != string(wb) {
		t.Errorf("stdin:\n got %s\nwant %s", gb, wb)
	}
	real, _ := filepath.EvalSymlinks(root)
	if lines[1] != root && lines[1] != real || lines[2] != root {
		t.Errorf("cwd %q and CLAUDE_PROJECT_DIR %q, want %q", lines[1], lines[2], root)
	}
	if h.Tool != "Bash" || h.Call != "toolu_1" || h.Matcher != "Bash" {
		t.Errorf("record: %+v", h)
	}
}

func TestRunSelects(t *testing.T) {
	in := Input{Event: PreToolUse, Tool: "Read", DshTool: "read", CallID: "c"}
	o, _ := run(t, in,
		Hook{Event: PreToolUse, Matcher: "Bash", Command: "echo bash"},
		Hook{Event: PostToolUse, Command: "echo post"},
		Hook{Event: PreToolUse, Matcher: "Read|Grep", Command: "echo read"},
		Hook{Event: PreToolUse, Command: "echo all"})
	var ran []string
	for _, h := range o.Runs {
		ran = append(ran, h.Output)
	}
	if strings.Join(ran, ",") != "read,all" {
		t.Errorf("ran %v, want read and all", ran)
	}
}

func TestRunExitTwo(t *testing.T) {
	in := Input{Event: PreToolUse, Tool: "Bash", DshTool: "bash", ToolInput: jsontext.Value(`{"command":"rm -rf /"}`)}
	o, _ := run(t, in, Hook{Event: PreToolUse, Command: `grep -q '"rm ' && { echo "no rm, please" >&2; exit 2; }; exit 0`})
	if o.Decision != "deny" || o.Reason != "no rm, please" || o.Runs[0].ExitCode != 2 {
		t.Errorf("outcome %+v", o)
	}
}

func TestRunTimeout(t *testing.T) {
	o, _ := run(t, Input{Event: Stop}, Hook{Event: Stop, Command: "echo started; sleep 30; exit 2", Timeout: 300 * time.Millisecond})
	h := o.Runs[0]
	if h.ExitCode != -1 || !strings.Contains(h.Error, "timed out") || h.Output != "started" || o.Decision != "" {
		t.Errorf("a hook that times out: %+v (outcome %q)", h, o.Decision)
	}
}

func TestRunMissingCommand(t *testing.T) {
	o, _ := run(t, Input{Event: UserPromptSubmit, Prompt: "hi"}, Hook{Event: UserPromptSubmit, Command: "./no-such-hook.sh"})
	h := o.Runs[0]
	if h.ExitCode == 0 || h.ExitCode == 2 || o.Decision != "" || h.Context != "" {
		t.Errorf("a missing hook must decide nothing: %+v", h)
	}
}

func TestRunCancelled(t *testing.T) {
	root := t.TempDir()
	r, _ := New([]Hook{{Event: Stop, Command: "sleep 30"}}, root, nil)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	o := r.Run(ctx, Input{Event: Stop}, nil)
	if h := o.Runs[0]; h.Error != "cancelled" || h.ExitCode != -1 {
		t.Errorf("cancelled: %+v", h)
	}
}

func TestBlockedPromptAddsNothing(t *testing.T) {
	o, _ := run(t, Input{Event: UserPromptSubmit, Prompt: "hi"},
		Hook{Event: UserPromptSubmit, Command: "echo extra context"},
		Hook{Event: UserPromptSubmit, Command: "echo blocked >&2; exit 2"})
	if o.Decision != "block" || o.Reason != "blocked" {
		t.Fatalf("outcome %+v", o)
	}
	for _, h := range o.Runs {
		if h.Context != "" {
			t.Errorf("a blocked prompt's hook added context: %+v", h)
		}
	}
}

func TestNilRunner(t *testing.T) {
	var r *Runner
	if r.Has(Stop) || len(r.Run(t.Context(), Input{Event: Stop}, nil).Runs) != 0 {
		t.Error("a nil runner ran something")
	}
}

// Hooks get the environment commands get: no credentials, unless kept.
func TestEnvIsScrubbed(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("DSH_TEST_PLAIN", "plain")
	has := func(env []string, kv string) bool {
		for _, e := range env {
			if e == kv {
				return true
			}
		}
		return false
	}
	if env := Env(nil); has(env, "ANTHROPIC_API_KEY=sk-ant-secret") || !has(env, "DSH_TEST_PLAIN=plain") {
		t.Error("a hook would see the API key, or not the plain variable")
	}
	if !has(Env([]string{"ANTHROPIC_API_KEY"}), "ANTHROPIC_API_KEY=sk-ant-secret") {
		t.Error("a kept variable was scrubbed")
	}
}
