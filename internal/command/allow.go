package command

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/shellrule"
)

// Allow reads a command's allowed-tools, Claude Code's permission rules:
// "Read", "Edit" (every tool that edits files), "mcp__server__tool", and
// for commands "Bash(git status)" (that exact command), "Bash(git add:*)" or
// "Bash(git add *)" (any command starting with those words). It returns what
// pre-approves a call — a shell command only when each simple command it runs
// matches a rule, word by word as bash will run it (so `git add .; rm -rf ~`
// does not match "git add:*") — and the rules it does not understand, which
// approve nothing.
func Allow(rules []string) (allow func(tool string, args []byte) bool, ignored []string) {
	tools := map[string]bool{}
	var bash []shellRule
	for _, r := range rules {
		name, spec, hasSpec := strings.Cut(strings.TrimSpace(r), "(")
		spec, closed := strings.CutSuffix(spec, ")")
		switch {
		case name == "":
			continue
		case hasSpec && !closed:
			ignored = append(ignored, r)
		case name == "Bash" && hasSpec:
			if sr, ok := parseShellRule(spec); ok {
				bash = append(bash, sr)
			} else {
				ignored = append(ignored, r)
			}
		case hasSpec: // a path or domain rule: not one dsh matches
			ignored = append(ignored, r)
		case name == "Edit":
			tools["edit"], tools["write"] = true, true
		default:
			tools[agents.ToolName(name)] = true
		}
	}
	if len(tools) == 0 && len(bash) == 0 {
		return nil, ignored
	}
	return func(tool string, args []byte) bool {
		if tools[tool] {
			return true
		}
		if tool != "bash" || len(bash) == 0 {
			return false
		}
		var p struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &p) != nil {
			return false
		}
		calls, ok := shellrule.Calls(p.Command)
		if !ok {
			return false
		}
		for _, words := range calls {
			if !slices.ContainsFunc(bash, func(r shellRule) bool { return r.match(words) }) {
				return false
			}
		}
		return true
	}, ignored
}

// shellRule is a Bash(…) rule: the words a command is, or starts with.
type shellRule struct {
	words  []string
	prefix bool
}

// parseShellRule reads "git add:*", "git add *", "git status" or "*"; a
// pattern anywhere else is not understood.
func parseShellRule(spec string) (shellRule, bool) {
	spec = strings.TrimSpace(spec)
	r := shellRule{}
	switch {
	case spec == "*":
		return shellRule{prefix: true}, true
	case strings.HasSuffix(spec, ":*"):
		spec, r.prefix = strings.TrimSuffix(spec, ":*"), true
	case strings.HasSuffix(spec, " *"):
		spec, r.prefix = strings.TrimSuffix(spec, " *"), true
	}
	r.words = strings.Fields(spec)
	if len(r.words) == 0 || strings.ContainsAny(spec, "*?") {
		return shellRule{}, false
	}
	return r, true
}

func (r shellRule) match(words []string) bool {
	if r.prefix {
		return len(words) >= len(r.words) && slices.Equal(words[:len(r.words)], r.words)
	}
	return slices.Equal(words, r.words)
}
