package chat

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// hookRecords are a prompt whose hooks ran: SessionStart added context, a
// PreToolUse hook blocked an rm, a PostToolUse hook told the model something.
func hookRecords() []session.Record {
	denied := tool.Errorf("A PreToolUse hook blocked this call: Blocked: rm is not allowed in this project")
	ok := tool.Text("hi\n")
	return []session.Record{
		{Type: session.TypeHook, Hook: &session.Hook{Event: "SessionStart", Command: "echo on branch main", Output: "on branch main",
			Context: "SessionStart hook additional context:\non branch main"}},
		{Type: session.TypeUser, Text: "clean up"},
		{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: jsontext.Value(`{"command":"rm victim.txt"}`)},
		{Type: session.TypeHook, Hook: &session.Hook{Event: "PreToolUse", Matcher: "Bash", Command: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh`,
			Tool: "Bash", Call: "c1", ExitCode: 2, Decision: "deny", Reason: "Blocked: rm is not allowed in this project",
			Output: "Blocked: rm is not allowed in this project"}},
		{Type: session.TypeToolResult, CallID: "c1", Result: &denied},
		{Type: session.TypeToolCall, CallID: "c2", Name: "bash", Args: jsontext.Value(`{"command":"echo hi"}`)},
		{Type: session.TypeToolResult, CallID: "c2", Result: &ok},
		{Type: session.TypeHook, Hook: &session.Hook{Event: "PostToolUse", Command: "./lint.sh", Tool: "Bash", Call: "c2", ExitCode: -1,
			Error: "timed out after 1m0s"}},
		{Type: session.TypeAssistant, Text: "I left the file alone."},
	}
}

// TestFrameHooks: each hook's run is a small card where it ran, the blocked
// call's result after it.
func TestFrameHooks(t *testing.T) {
	h := newHarness(t, 80)
	h.working()
	for _, r := range hookRecords() {
		h.events(recordEvent(r))
	}
	h.turnEnds(agent.StopEndTurn, nil)
	h.frame("hooks")
}
