package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/rules"
)

// permissionsCommand is /permissions: the rules in force with where each
// came from, and this session's "always" answers written as rules; or
// /permissions allow|ask|deny RULE and /permissions remove allow|ask|deny
// RULE, which change the user's own rules (dsh's permissions.json) for this
// session and every later one.
func (s *Session) permissionsCommand(_ context.Context, args string) (Reply, error) {
	f := strings.Fields(args)
	if len(f) == 0 {
		return Reply{Text: s.permissionsText()}, nil
	}
	remove := f[0] == "remove"
	if remove {
		f = f[1:]
	}
	if len(f) < 2 {
		return Reply{Text: "Want /permissions, /permissions allow|ask|deny RULE or /permissions remove allow|ask|deny RULE."}, nil
	}
	effect, rule := f[0], strings.Join(f[1:], " ")
	if _, err := rules.ParseEffect(effect); err != nil {
		return Reply{Text: "Cannot change the rules: " + err.Error() + "."}, nil
	}
	if s.o.EditRules == nil {
		return Reply{Text: "Rules cannot be changed from this session."}, nil
	}
	set, err := s.o.EditRules(effect, rule, remove)
	if err != nil {
		return Reply{Text: "Cannot change the rules: " + err.Error() + "."}, nil
	}
	s.rules.Store(set)
	verb := "Added"
	if remove {
		verb = "Removed"
	}
	return Reply{Text: fmt.Sprintf("%s your rule %s %s; it holds from the next call on, here and in later sessions.", verb, effect, rule)}, nil
}

func (s *Session) permissionsText() string {
	var b strings.Builder
	rs := s.rules.Load().Rules()
	if len(rs) == 0 {
		b.WriteString("No permission rules: the mode decides what is asked about.")
	} else {
		b.WriteString("Permission rules (deny beats ask beats allow; a deny holds in every mode):")
		width := 0
		for _, r := range rs {
			width = max(width, len(r.Text))
		}
		for _, e := range []rules.Effect{rules.Deny, rules.Ask, rules.Allow} {
			for _, r := range rs {
				if r.Effect == e {
					fmt.Fprintf(&b, "\n  %-5s %-*s  %s", e, width, r.Text, r.Source)
				}
			}
		}
	}
	if keys := s.agent.Allowed(); len(keys) > 0 {
		b.WriteString("\nAllowed for this session (your \"always\" answers):")
		for _, k := range keys {
			b.WriteString("\n  allow " + keyRule(k))
		}
	}
	b.WriteString("\n/permissions allow|ask|deny RULE adds one of yours, /permissions remove allow|ask|deny RULE removes it " +
		"(Claude Code's syntax: Bash(npm run test:*), Read(./.env), Edit(src/**), WebFetch(domain:example.com), mcp__server__tool, Task(agent)).")
	return b.String()
}

// keyRule writes a remembered approval as the rule that says the same.
func keyRule(key string) string {
	switch {
	case key == "edits":
		return "Edit"
	case strings.HasPrefix(key, "command:exactly: "):
		return "Bash(" + strings.TrimPrefix(key, "command:exactly: ") + ")"
	case strings.HasPrefix(key, "command:"):
		return "Bash(" + strings.TrimPrefix(key, "command:") + ":*)"
	case strings.HasPrefix(key, "fetch:"):
		return "WebFetch(domain:" + strings.TrimPrefix(key, "fetch:") + ")"
	case strings.HasPrefix(key, "tool:"):
		return strings.TrimPrefix(key, "tool:")
	}
	return key
}
