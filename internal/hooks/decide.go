package hooks

import (
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
)

// output is a hook's JSON output, as Claude Code reads it. Unknown members are
// ignored, as there.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision is block (PostToolUse, UserPromptSubmit, Stop, SubagentStop),
	// or the older approve and block of PreToolUse.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific *struct {
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             jsontext.Value `json:"updatedInput"`
		AdditionalContext        string         `json:"additionalContext"`
		// Decision is PermissionRequest's.
		Decision *struct {
			Behavior     string         `json:"behavior"`
			UpdatedInput jsontext.Value `json:"updatedInput"`
			Message      string         `json:"message"`
			Interrupt    bool           `json:"interrupt"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// object is v if it is a JSON object, else nil: an updatedInput is one.
func object(v jsontext.Value) jsontext.Value {
	if v.Kind() != '{' {
		return nil
	}
	return v.Clone()
}

// interpret reads a finished hook the way Claude Code does for its event:
// exit code 2 blocks (what it blocks depends on the event) with stderr as the
// reason; other non-zero codes are errors that decide nothing; exit code 0
// with a JSON object on stdout decides through it, and plain stdout is added
// to the context of a prompt (UserPromptSubmit) or the session (SessionStart).
// updated is the tool input the hook asked to run instead (PreToolUse,
// PermissionRequest).
func interpret(rec session.Hook, res result) (_ session.Hook, updated jsontext.Value) {
	rec.ExitCode, rec.Error = res.code, res.err
	rec.Output = capText(joinOutput(res.stdout, res.stderr), OutputCap)
	ev := Event(rec.Event)
	switch {
	case res.err != "":
		return rec, nil
	case res.code == 2:
		reason := strings.TrimSpace(res.stderr)
		switch ev {
		case PreToolUse, PermissionRequest:
			rec.Decision, rec.Reason = "deny", reason
		case PostToolUse, Stop, SubagentStop:
			rec.Decision, rec.Reason = "block", reason
			rec.Context = feedback(rec, reason)
		case PostToolUseFailure:
			rec.Context = feedback(rec, reason)
		case UserPromptSubmit:
			rec.Decision, rec.Reason = "block", reason
		case SessionStart, SessionEnd, Notification, SubagentStart, PreCompact:
			// Nothing to block: stderr shows on the card.
		}
		return rec, nil
	case res.code != 0:
		return rec, nil
	}
	text := strings.TrimSpace(res.stdout)
	var out output
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &out) != nil {
		if ev == UserPromptSubmit || ev == SessionStart {
			rec.Context = additional(rec, text)
		}
		return rec, nil
	}
	if out.SuppressOutput {
		rec.Output = capText(res.stderr, OutputCap)
	}
	if out.SystemMessage != "" {
		rec.Output = capText(joinOutput(out.SystemMessage, rec.Output), OutputCap)
	}
	if out.Continue != nil && !*out.Continue {
		rec.Decision, rec.Reason = "stop", out.StopReason
		return rec, nil
	}
	var extra string
	if s := out.Specific; s != nil {
		extra = s.AdditionalContext
		switch ev {
		case PreToolUse:
			switch s.PermissionDecision {
			case "allow", "deny", "ask":
				rec.Decision, rec.Reason = s.PermissionDecision, s.PermissionDecisionReason
			}
			updated = object(s.UpdatedInput)
		case PermissionRequest:
			if d := s.Decision; d != nil {
				switch d.Behavior {
				case "allow":
					rec.Decision = "allow"
					updated = object(d.UpdatedInput)
				case "deny":
					rec.Decision, rec.Reason = "deny", d.Message
					if d.Interrupt {
						rec.Decision = "stop"
					}
				}
			}
		case PostToolUse, PostToolUseFailure, Notification, UserPromptSubmit, Stop, SubagentStart, SubagentStop,
			PreCompact, SessionStart, SessionEnd:
		}
	}
	switch {
	case rec.Decision != "":
	case (ev == PreToolUse || ev == PermissionRequest) && out.Decision == "approve":
		rec.Decision, rec.Reason = "allow", out.Reason
	case (ev == PreToolUse || ev == PermissionRequest) && out.Decision == "block":
		rec.Decision, rec.Reason = "deny", out.Reason
	case out.Decision == "block" && (ev == PostToolUse || ev == Stop || ev == SubagentStop):
		rec.Decision, rec.Reason = "block", out.Reason
		rec.Context = feedback(rec, out.Reason)
	case out.Decision == "block" && ev == UserPromptSubmit:
		rec.Decision, rec.Reason = "block", out.Reason
	}
	switch ev {
	case Notification, Stop, SubagentStop, PreCompact, SessionEnd, PermissionRequest:
		// Claude Code adds nothing to the context from these.
	case PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SubagentStart, SessionStart:
		if extra != "" {
			rec.Context = joinOutput(rec.Context, additional(rec, extra))
		}
	}
	if rec.Decision == "deny" {
		updated = nil
	}
	return rec, updated
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
