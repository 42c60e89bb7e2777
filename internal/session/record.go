// Package session is the append-only session log. The log is also the event stream:
// consumers subscribe to a session's records, live as they are appended or read
// back from the file, and cannot tell the two apart.
package session

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// FormatVersion is the log format this build writes. A log with a higher version
// is refused with a clear message.
const FormatVersion = 1

// RecordType says what a record holds.
type RecordType string

// The record types, in the order a turn typically produces them.
const (
	TypeHeader     RecordType = "header"      // Version, SessionID, Cwd, System
	TypeUser       RecordType = "user"        // Text, Content (images)
	TypeAssistant  RecordType = "assistant"   // Text: a complete assistant text block
	TypeThinking   RecordType = "thinking"    // Text, Signature
	TypeToolCall   RecordType = "tool_call"   // CallID, Name, Args (Signature: the provider's own)
	TypeProgress   RecordType = "progress"    // CallID, Chunk: live output, folded away by replay
	TypeToolResult RecordType = "tool_result" // CallID, Result, Cwd (when the call moved it)
	TypePlan       RecordType = "plan"        // Plan
	TypeTurnEnd    RecordType = "turn_end"    // StopReason, Usage, Error
	TypeMode       RecordType = "mode"        // Mode: the permission mode from here on
	TypeAllow      RecordType = "allow"       // Keys: approvals remembered from here on ("always allow")
	// TypeCompaction replaces the model context before it with its summary
	// (Text), keeping the last Keep turns; Focus is what the user asked it to
	// keep in view, Usage what the summary cost.
	TypeCompaction RecordType = "compaction"
	// TypeInstructions is a nested AGENTS.md (Path, relative to the root) added
	// to the model context, with Text its (capped) content.
	TypeInstructions RecordType = "instructions"
	TypeModel        RecordType = "model" // Model, Thinking: the model and thinking level from here on
	// TypeCheckpoint is the workspace's state just before a prompt (before its
	// user record) and at its end (Checkpoint), so that what it changed can be
	// undone, after a reload too.
	TypeCheckpoint RecordType = "checkpoint"
	// TypeRestore is an undo or rewind of the workspace (Restore): what it
	// wrote, what it kept because the user had changed it, and its own
	// snapshots, so that it can be undone in turn.
	TypeRestore RecordType = "restore"
	// TypeHook is one run of a user's hook (Hook): which hook, for which event
	// and call, what it decided and printed, and the text it added to the
	// model context, which the context builder folds like instructions.
	TypeHook RecordType = "hook"
	// TypeCommand is a built-in slash command the user ran, Text as typed
	// ("/cost"), logged before it runs: what it changed follows in records of
	// its own (mode, model, restore …), then its TypeReply.
	TypeCommand RecordType = "command"
	// TypeReply is a built-in command's answer to the user (Text), with the
	// diff it shows (Diff: /diff); a command whose records say it all has none.
	// dsh's own word to the user is one too: a sign-in to an MCP server
	// (SignIn), asked for and then how it ended.
	TypeReply RecordType = "reply"
	// TypeDecision is the user's answer to a permission request or a
	// question (CallID; Decision: allow, always, reject or answer), with From
	// the client that gave it ("terminal", "editor", "web", "attach"): with
	// many clients on a session, the first answer wins and the log says whose.
	TypeDecision RecordType = "decision"
	// TypeTitle names the session (Text) from here on: /rename, dsh
	// sessions rename.
	TypeTitle RecordType = "title"
	// TypeDamaged is never written: lenient readers (a web page following a log)
	// hand it out in place of a line that does not decode, with Error saying why,
	// and go on after it.
	TypeDamaged RecordType = "damaged"
)

// The decisions a decision record holds.
const (
	DecisionAllow  = "allow"  // allowed once
	DecisionAlways = "always" // allowed, and remembered
	DecisionReject = "reject"
	DecisionAnswer = "answer" // a question answered
)

// Decisions are the decisions a decision record may hold.
var Decisions = []string{DecisionAllow, DecisionAlways, DecisionReject, DecisionAnswer}

// Record is one line of the log. Which fields are set depends on Type.
type Record struct {
	Type RecordType `json:"type"`
	Time time.Time  `json:"time"`

	// header; tool_result
	Version   int    `json:"version,omitzero"`
	SessionID string `json:"sessionId,omitempty"`
	// Cwd is, in the header, the workspace root (absolute); in a tool result,
	// the session's working directory the call left behind, relative to the
	// root ("." for the root itself; absolute when outside it), set only when
	// the call moved it.
	Cwd string `json:"cwd,omitempty"`
	// System is the session's system prompt, rendered once when the session was
	// created (the date, the root's instructions, the tools' guidance), so a
	// reloaded session sends what the live one sent. Logs from before it was
	// recorded have none.
	System string `json:"system,omitempty"`
	// Parent is, in a child session's header, the session and the task call
	// that started it.
	Parent *Parent `json:"parent,omitempty"`

	// user, assistant, thinking; Signature also marks a tool_call the provider
	// ran itself (a web search) and holds its blocks, replayed verbatim.
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Content holds a user prompt's images (base64), in the order they were
	// attached after its Text.
	Content []card.Content `json:"content,omitempty"`

	// tool_call, progress, tool_result
	CallID string         `json:"callId,omitempty"`
	Name   string         `json:"name,omitempty"`
	Args   jsontext.Value `json:"args,omitzero"`
	// Preview is what the call would do, computed before the permission step by
	// tools that have one (write, edit); its call card is made from it.
	Preview jsontext.Value `json:"preview,omitzero"`
	// Continues marks a call logged after results of earlier calls of the same
	// assistant message (each call is logged when its turn to run comes).
	Continues bool `json:"continues,omitzero"`
	// Aside marks a call the user's input ran before its prompt (a command
	// body's !`cmd`): its output is in that prompt, so the model context
	// leaves the call out.
	Aside  bool         `json:"aside,omitzero"`
	Chunk  string       `json:"chunk,omitempty"`
	Result *tool.Result `json:"result,omitempty"`

	// plan
	Plan []tool.PlanEntry `json:"plan,omitempty"`

	// turn_end
	StopReason string `json:"stopReason,omitempty"` // end_turn, max_turns, cancelled, refusal, error
	Usage      *Usage `json:"usage,omitempty"`
	Error      string `json:"error,omitempty"`

	// mode
	Mode string `json:"mode,omitempty"`
	// allow
	Keys []string `json:"keys,omitempty"`

	// compaction
	Keep  int    `json:"keep,omitzero"`
	Focus string `json:"focus,omitempty"`
	// instructions
	Path string `json:"path,omitempty"`
	// model: Model is the model from here on; Thinking the thinking level
	// (off, adaptive, low … max or a token budget; "" the configured one).
	Model    string `json:"model,omitempty"`
	Thinking string `json:"thinking,omitempty"`

	// decision: what was decided (see TypeDecision) and by which client.
	Decision string `json:"decision,omitempty"`
	From     string `json:"from,omitempty"`

	// reply: the diff a command shows (/diff), in the files' order.
	Diff []RestoredFile `json:"diff,omitempty"`

	// reply: a sign-in to an MCP server the user is asked for, or its end.
	SignIn *SignIn `json:"signIn,omitempty"`

	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	Restore    *Restore    `json:"restore,omitempty"`
	Hook       *Hook       `json:"hook,omitempty"`
}

// Hook is one run of a hook command (a Claude Code compatible hook).
type Hook struct {
	Event   string `json:"event"` // PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, Notification
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	// Tool is the tool as the hook saw it (Claude Code's name where dsh maps
	// one) and Call the call it ran for, on the tool events.
	Tool string `json:"tool,omitempty"`
	Call string `json:"call,omitempty"`
	// ExitCode is the command's; -1 when it did not run or finish (Error says why).
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
	// Decision is what the run decided: allow, deny or ask (PreToolUse),
	// block (the call's result, the prompt or the stop), stop (continue:
	// false); "" when it decided nothing. Reason is the hook's why.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Output is what the command printed (stdout, then stderr), capped.
	Output string `json:"output,omitempty"`
	// Context is the text the run added to the model context: feedback after
	// a call, a prompt's or the session's additional context, the reason a
	// stop was blocked.
	Context string `json:"context,omitempty"`
}

// SignIn is a sign-in to an MCP server: the link the user is asked to open,
// then whether it happened. It never holds a token.
type SignIn struct {
	Server string `json:"server"`
	State  string `json:"state"`         // SignInWaiting, SignInDone or SignInFailed
	URL    string `json:"url,omitempty"` // the link to open (waiting)
	Error  string `json:"error,omitempty"`
}

// CheckpointPending is a "before" checkpoint's note while its snapshot is
// still being taken: the prompt's "after" record names the tree.
const CheckpointPending = "the snapshot is being taken; the prompt's end logs it"

// The states of a sign-in.
const (
	SignInWaiting = "waiting"
	SignInDone    = "signed_in"
	SignInFailed  = "failed"
)

// Parent is the session and call a child session (a subagent's) belongs to,
// and the agent it runs.
type Parent struct {
	Session string `json:"session"`
	CallID  string `json:"callId"`
	Agent   string `json:"agent,omitempty"`
}

// ChildPath is the log of the child session id in dir, the directory of its
// parent's log: a task's result names the child.
func ChildPath(dir, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("invalid child session id %q", id)
	}
	return filepath.Join(dir, id+".jsonl"), nil
}

// Checkpoint phases.
const (
	PhaseBefore = "before"
	PhaseAfter  = "after"
)

// Checkpoint is a snapshot of the workspace around a prompt.
type Checkpoint struct {
	Prompt int    `json:"prompt"` // the session's prompts counted from 1
	Phase  string `json:"phase"`  // PhaseBefore or PhaseAfter
	// Tree is the snapshot in the workspace's shadow object store (outside the
	// workspace); "" when none could be taken, and Note says why.
	Tree string `json:"tree,omitempty"`
	Note string `json:"note,omitempty"`
	// Skipped are files left out of the snapshot (over the size cap, or named
	// like a secret).
	Skipped []string `json:"skipped,omitempty"`
	// Before, on an after, is the prompt's "before" when its before record
	// could not name it: the snapshot was still being taken as the prompt
	// began, or the files the prompt changed were found changed since it.
	Before string `json:"before,omitempty"`
}

// Restore is an undo or a rewind of the workspace.
type Restore struct {
	// To is the change (counting the session's prompts and restores from 1)
	// whose state before it the restore went back to; Prompt is its prompt (0
	// when it is a restore).
	To     int `json:"to"`
	Prompt int `json:"prompt,omitzero"`
	// Before and After are the workspace's snapshots around the restore.
	Before string `json:"before"`
	After  string `json:"after,omitempty"`
	// Files are those it wrote (the diff it applied); Kept those it left alone
	// because the user had changed them since the agent did.
	Files []RestoredFile `json:"files,omitempty"`
	Kept  []string       `json:"kept,omitempty"`
	// Fork is the session the conversation was forked into, if it was.
	Fork string `json:"fork,omitempty"`
}

// RestoredFile is one file a restore wrote: the diff it applied (texts capped,
// a placeholder for binary content) and its line counts (-1: binary). /diff's
// reply holds the same for each file a change touched.
type RestoredFile struct {
	Path    string  `json:"path"`
	OldText *string `json:"oldText"` // nil: the file did not exist
	NewText *string `json:"newText"` // nil: the restore removed it
	Added   int     `json:"added"`
	Removed int     `json:"removed"`
}

// Usage is the token usage of a turn.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// ContextTokens is the size of the conversation after the turn's last model
	// call (its input and output), as the provider counted it: how full the
	// model's context window is.
	ContextTokens int64 `json:"contextTokens,omitzero"`
	// Calls are a turn's model calls, each with the model that made it, so that
	// each is priced at its own model (a compaction's call is on its own record).
	Calls []CallUsage `json:"calls,omitempty"`
}

// CallUsage is the tokens of one model call.
type CallUsage struct {
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
}
