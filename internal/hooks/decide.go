package hooks

import (
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/session"
)

// output is a hook's JSON output, as Claude Code reads it. Unknown members are
// ignored, as there.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision is block (PostToolUse, UserPromptSubmit, Stop), or the older
	// approve and block of PreToolUse.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific *struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// interpret reads a finished command the way Claude Code does for its event:
// exit code 2 blocks (what it blocks depends on the event) with stderr as the
// reason; other non-zero codes are errors that decide nothing; exit code 0
// with a JSON object on stdout decides through it, and plain stdout is added
// to the context of a prompt (UserPromptSubmit) or the session (SessionStart).
func interpret(rec session.Hook, res result) session.Hook {
	rec.ExitCode, rec.Error = res.code, res.err
	rec.Output = capText(joinOutput(res.stdout, res.stderr), OutputCap)
	ev := Event(rec.Event)
	switch {
	case res.err != "":
		return rec
	case res.code == 2:
		reason := strings.TrimSpace(res.stderr)
		switch ev {
		case PreToolUse:
			rec.Decision, rec.Reason = "deny", reason
		case PostToolUse, Stop:
			rec.Decision, rec.Reason = "block", reason
			rec.Context = feedback(rec, reason)
		case UserPromptSubmit:
			rec.Decision, rec.Reason = "block", reason
		case SessionStart, Notification:
			// Nothing to block: stderr shows on the card.
		}
		return rec
	case res.code != 0:
		return rec
	}
	text := strings.TrimSpace(res.stdout)
	var out output
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &out) != nil {
		if ev == UserPromptSubmit || ev == SessionStart {
			rec.Context = additional(rec, text)
		}
		return rec
	}
	if out.SuppressOutput {
		rec.Output = capText(res.stderr, OutputCap)
	}
	if out.SystemMessage != "" {
		rec.Output = capText(joinOutput(out.SystemMessage, rec.Output), OutputCap)
	}
	if out.Continue != nil && !*out.Continue {
		rec.Decision, rec.Reason = "stop", out.StopReason
		return rec
	}
	var extra string
	if s := out.Specific; s != nil {
		extra = s.AdditionalContext
		if ev == PreToolUse {
			switch s.PermissionDecision {
			case "allow", "deny", "ask":
				rec.Decision, rec.Reason = s.PermissionDecision, s.PermissionDecisionReason
			}
		}
	}
	switch {
	case rec.Decision != "":
	case ev == PreToolUse && out.Decision == "approve":
		rec.Decision, rec.Reason = "allow", out.Reason
	case ev == PreToolUse && out.Decision == "block":
		rec.Decision, rec.Reason = "deny", out.Reason
	case out.Decision == "block" && (ev == PostToolUse || ev == Stop):
		rec.Decision, rec.Reason = "block", out.Reason
		rec.Context = feedback(rec, out.Reason)
	case out.Decision == "block" && ev == UserPromptSubmit:
		rec.Decision, rec.Reason = "block", out.Reason
	}
	if extra != "" && ev != Notification && ev != Stop {
		rec.Context = joinOutput(rec.Context, additional(rec, extra))
	}
	return rec
}

// feedback is what the model reads when a hook blocks after a call or at a
// stop: the hook's reason, attributed to it.
func feedback(rec session.Hook, reason string) string {
	if reason == "" {
		reason = "(the hook gave no reason)"
	}
	at := rec.Event + " hook"
	if rec.Tool != "" {
		at += " on " + rec.Tool
	}
	return capText(at+" feedback:\n"+reason, contextCap)
}

// additional is context a hook adds, attributed to it.
func additional(rec session.Hook, text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	return capText(rec.Event+" hook additional context:\n"+text, contextCap)
}

func joinOutput(a, b string) string {
	a, b = strings.TrimRight(a, "\n"), strings.TrimRight(b, "\n")
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// capText cuts s to at most n bytes on a rune boundary, saying so.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n… (cut)"
}
