// Package hooks runs the user's hooks: commands (or questions to the model,
// or HTTP requests) that Claude Code would run at the same moments (before
// and after a tool call, when the user would be asked, when a prompt is
// submitted, when a turn or a task would stop, around compaction, when a
// session starts and ends), given
// the same JSON on stdin and read back the same way (exit code 2 blocks, JSON
// output may allow, deny or ask), so hook scripts written for Claude Code work
// unchanged. Each run is a session.Hook, which the caller logs: the log shows
// every run, and the text a run adds to the model context is in its record.
//
// Hooks run under the supervisor (nothing they start outlives them), in the
// workspace root, with the scrubbed environment plus CLAUDE_PROJECT_DIR, and
// with a timeout. A hook that cannot start, fails or times out is reported in
// its record and decides nothing: the session goes on.
package hooks

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Event is when a hook runs, named as in Claude Code.
type Event string

// The events dsh runs hooks for: Claude Code's that have a counterpart in dsh.
const (
	PreToolUse         Event = "PreToolUse"         // before a call's permission step; may allow, deny, ask or change its input
	PermissionRequest  Event = "PermissionRequest"  // when the user would be asked about a call; may allow or deny for them
	PostToolUse        Event = "PostToolUse"        // after a call ran; may tell the model something
	PostToolUseFailure Event = "PostToolUseFailure" // after a call failed or was interrupted; may tell the model something
	Notification       Event = "Notification"       // when the user is asked something
	UserPromptSubmit   Event = "UserPromptSubmit"   // before a prompt is sent; may block it or add context
	Stop               Event = "Stop"               // when the model ends its turn; may keep it going
	SubagentStart      Event = "SubagentStart"      // when a task (subagent) starts; may add to its context
	SubagentStop       Event = "SubagentStop"       // when a task ends its turn; may keep it going
	PreCompact         Event = "PreCompact"         // before the context is compacted
	SessionStart       Event = "SessionStart"       // before a session's first prompt, and after a compaction; may add context
	SessionEnd         Event = "SessionEnd"         // when a session that ran hooks closes
)

// Events are the events dsh knows, in Claude Code's documentation's order.
var Events = []Event{PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, Notification,
	UserPromptSubmit, Stop, SubagentStart, SubagentStop, PreCompact, SessionStart, SessionEnd}

// DefaultTimeout is a command or http hook's timeout when it sets none, and
// PromptTimeout a prompt hook's, as in Claude Code.
const (
	DefaultTimeout = 60 * time.Second
	PromptTimeout  = 30 * time.Second
)

// Hook is one configured hook.
type Hook struct {
	Event Event
	// Matcher selects the tool calls (the tool events), the sources
	// (SessionStart), the reasons (SessionEnd), the triggers (PreCompact),
	// the agent types (SubagentStart, SubagentStop) or the notification
	// types it runs for: "" or "*" all; a plain name or names joined by |
	// exactly those; anything else a regular expression that must match
	// somewhere in the name.
	Matcher string
	// Type is command ("" too): Command runs with bash -c (sh when there is
	// no bash); prompt: Prompt, with $ARGUMENTS the input, asks the session's
	// model yes or no; http: the input is POSTed to URL with Headers, whose
	// $VAR and ${VAR} are those of AllowedEnvVars in the hooks' environment.
	Type           string
	Command        string
	Prompt         string
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	Timeout        time.Duration // 0: DefaultTimeout (PromptTimeout)
	// Env are variables the hook runs with besides the runner's (a plugin's
	// CLAUDE_PLUGIN_ROOT); they are also what an http hook's headers may name.
	Env []string
	// Source is where the hook was configured (a file's path), for the user.
	Source string
}

// what is the hook as its record names it: its command, prompt or URL.
func (h Hook) what() string {
	switch h.Type {
	case "prompt":
		return "prompt: " + h.Prompt
	case "http":
		return "POST " + h.URL
	}
	return h.Command
}

// plainMatcher is a matcher Claude Code compares exactly: names and |.
var plainMatcher = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_|]+$`) })

// matcher is a compiled Hook.Matcher.
type matcher struct {
	all   bool
	names []string
	re    *regexp.Regexp
}

// CheckMatcher says whether m is a matcher hooks can use.
func CheckMatcher(m string) error {
	_, err := compile(m)
	return err
}

func compile(m string) (matcher, error) {
	switch {
	case m == "" || m == "*":
		return matcher{all: true}, nil
	case plainMatcher().MatchString(m):
		return matcher{names: strings.Split(m, "|")}, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return matcher{}, fmt.Errorf("matcher %q: %w", m, err)
	}
	return matcher{re: re}, nil
}

// match reports whether any of names (the name a call has in Claude Code and
// in dsh) is selected. Names that are "" are not considered.
func (m matcher) match(names ...string) bool {
	if m.all {
		return true
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if m.re != nil && m.re.MatchString(n) {
			return true
		}
		for _, w := range m.names {
			if w == n {
				return true
			}
		}
	}
	return false
}

// PermissionMode is dsh's permission mode as Claude Code names it in a hook's
// input (permission_mode); modes Claude Code lacks keep dsh's name.
func PermissionMode(mode string) string {
	switch mode {
	case "accept-edits":
		return "acceptEdits"
	case "bypass":
		return "bypassPermissions"
	}
	return mode
}
