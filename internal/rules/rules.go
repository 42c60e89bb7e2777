// Package rules is the user's permission policy, written once instead of
// answered call by call: allow, ask and deny rules in Claude Code's syntax —
// Bash(npm run test:*), Read(./.env), Edit(src/**), WebFetch(domain:x.com),
// mcp__server__tool, Task(agent) — matched against what a call will really
// do: the words each program of a shell line runs with, the real path a file
// tool reaches, the host a fetch asks. Deny beats ask beats allow. The package
// is pure: the caller resolves paths and says what a call is.
package rules

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/shellrule"
)

// Effect is what a rule does to the calls it matches.
type Effect int

// The effects, weakest first.
const (
	Allow Effect = iota
	Ask
	Deny
)

func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "?"
}

// ParseEffect reads "allow", "ask" or "deny".
func ParseEffect(s string) (Effect, error) {
	for _, e := range []Effect{Allow, Ask, Deny} {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("want allow, ask or deny, got %q", s)
}

// Rule is one rule as the user wrote it, with where it came from.
type Rule struct {
	Effect Effect
	Text   string // as written: "Bash(npm run test:*)"
	Source string // the file (or "flag", "session") it came from

	tool    string // Bash, Read, Edit, WebFetch, Task, mcp__…, or another tool's name
	spec    string
	hasSpec bool
	// For path rules: the pattern made absolute, slash-separated.
	pattern string
	// For Bash rules: the pattern as a regular expression over a program's
	// words joined by spaces, and its literal head (for cut words).
	bash *regexp.Regexp
	head string
}

// Base says what a path rule's pattern is relative to: Root for "/x" (the
// project a settings file belongs to, or the workspace for the user's file),
// Cwd for "x" and "./x", Home for "~/x".
type Base struct{ Root, Cwd, Home string }

// Parse reads one rule. A rule dsh cannot match (a path rule on a tool that
// takes none, a malformed pattern) is an error that says why; the caller
// reports it rather than keeping a rule that would silently never hold.
func Parse(text string, e Effect, source string, b Base) (Rule, error) {
	r := Rule{Effect: e, Text: strings.TrimSpace(text), Source: source}
	name, spec, has := strings.Cut(r.Text, "(")
	if has {
		var ok bool
		if spec, ok = strings.CutSuffix(spec, ")"); !ok {
			return Rule{}, fmt.Errorf("%q: want Tool or Tool(specifier)", text)
		}
	}
	r.tool, r.spec, r.hasSpec = strings.TrimSpace(name), spec, has && strings.TrimSpace(spec) != "" && strings.TrimSpace(spec) != "*"
	if r.tool == "" || strings.ContainsAny(r.tool, " \t()") {
		return Rule{}, fmt.Errorf("%q: want Tool or Tool(specifier)", text)
	}
	if !r.hasSpec {
		return r, nil
	}
	switch r.tool {
	case "Bash":
		re, head, err := bashPattern(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("%q: %w", text, err)
		}
		r.bash, r.head = re, head
	case "Read", "Edit":
		p, err := pathPattern(spec, b)
		if err != nil {
			return Rule{}, fmt.Errorf("%q: %w", text, err)
		}
		r.pattern = p
	case "WebFetch":
		d, ok := strings.CutPrefix(spec, "domain:")
		if !ok || d == "" || strings.ContainsAny(d, "/ ") {
			return Rule{}, fmt.Errorf("%q: want WebFetch(domain:example.com)", text)
		}
		r.spec = strings.ToLower(d)
	case "Task", "Agent":
		r.tool = "Task"
	default:
		return Rule{}, fmt.Errorf("%q: %s takes no specifier (only Bash, Read, Edit, WebFetch and Task do)", text, r.tool)
	}
	return r, nil
}

// bashPattern turns a Bash rule's specifier into a regular expression over a
// program's words: "npm run test:*" (the legacy prefix form) and "npm run *"
// match `npm run` alone or followed by words; "*" elsewhere matches anything,
// spaces included; the rest is literal.
func bashPattern(spec string) (*regexp.Regexp, string, error) {
	spec = strings.TrimSpace(spec)
	optional := false
	switch {
	case strings.HasSuffix(spec, ":*"):
		spec, optional = strings.TrimSuffix(spec, ":*"), true
	case strings.HasSuffix(spec, " *") && strings.Count(spec, "*") == 1:
		spec, optional = strings.TrimSuffix(spec, " *"), true
	}
	if spec == "" {
		return nil, "", errors.New("an empty command")
	}
	var b strings.Builder
	b.WriteString("^")
	parts := strings.Split(spec, "*")
	for i, p := range parts {
		if i > 0 {
			b.WriteString(".*")
		}
		// Spaces around a wildcard stay ("git * main" needs words there).
		lit := strings.Join(strings.Fields(p), " ")
		if i > 0 && strings.HasPrefix(p, " ") {
			lit = " " + lit
		}
		if i < len(parts)-1 && strings.HasSuffix(p, " ") && lit != "" {
			lit += " "
		}
		b.WriteString(regexp.QuoteMeta(lit))
	}
	if optional {
		b.WriteString("( .*)?")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, "", err
	}
	return re, strings.Join(strings.Fields(parts[0]), " "), nil
}

// pathPattern makes a Read or Edit specifier absolute, as Claude Code reads
// it: "//x" is the absolute /x, "~/x" the home's, "/x" the root's, "x" and
// "./x" the working directory's.
func pathPattern(spec string, b Base) (string, error) {
	spec = strings.TrimSpace(spec)
	var p string
	switch {
	case strings.HasPrefix(spec, "//"):
		p = spec[1:]
	case strings.HasPrefix(spec, "~/"):
		if b.Home == "" {
			return "", errors.New("~ is not known here")
		}
		p = filepath.ToSlash(b.Home) + spec[1:]
	case strings.HasPrefix(spec, "/"):
		p = filepath.ToSlash(b.Root) + spec
	default:
		p = filepath.ToSlash(b.Cwd) + "/" + strings.TrimPrefix(spec, "./")
	}
	p = path.Clean(p)
	if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
		return "", fmt.Errorf("a malformed pattern: %w", err)
	}
	return p, nil
}

// Call is what a call will do, as far as rules care.
type Call struct {
	// Tool is dsh's tool name: bash, read, edit, write, grep, glob, ls,
	// web_fetch, task, mcp__server__tool…
	Tool string
	// Command is a bash call's command line.
	Command string
	// Paths are the real, absolute paths a file tool reads or changes
	// (symlinks followed).
	Paths []string
	// URL is what a fetch asks for.
	URL string
	// Agent is the subagent a task call starts.
	Agent string
}

// claudeTools maps Claude Code's tool names to the dsh tools a rule on them
// covers: Edit covers every tool that changes files, Read every one that
// reads them.
var claudeTools = map[string][]string{
	"Bash":      {"bash"},
	"Read":      {"read", "grep", "glob", "ls"},
	"Edit":      {"edit", "write"},
	"Write":     {"write"},
	"MultiEdit": {"edit"},
	"Glob":      {"glob"},
	"Grep":      {"grep"},
	"LS":        {"ls"},
	"WebFetch":  {"web_fetch"},
	"WebSearch": {"web_search"},
	"Task":      {"task"},
	"TodoWrite": {"todo_write"},
}

// covers says whether the rule names the call's tool.
func (r Rule) covers(tool string) bool {
	if ts, ok := claudeTools[r.tool]; ok {
		return slices.Contains(ts, tool)
	}
	if strings.HasPrefix(r.tool, "mcp__") {
		// mcp__server covers every tool of the server; mcp__server__* too.
		server := strings.TrimSuffix(r.tool, "__*")
		return tool == r.tool || strings.Count(server, "__") == 1 && strings.HasPrefix(tool, server+"__")
	}
	return tool == r.tool // a dsh tool by its own name
}

// Set is the rules in force, in no order: effects decide, not positions.
type Set struct{ rules []Rule }

// NewSet collects rules.
func NewSet(rs ...Rule) *Set { return &Set{rules: slices.Clone(rs)} }

// Rules lists the set's rules.
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	return slices.Clone(s.rules)
}

// Verdict is what the rules say of a call.
type Verdict struct {
	// Matched says a rule decided; Effect and Rule are then set.
	Matched bool
	Effect  Effect
	Rule    Rule
	// Unsure says a deny or ask rule on Bash is in force and dsh cannot tell
	// what the command runs (a program named by $VAR): it is asked about,
	// never run unasked.
	Unsure bool
}

// Decide finds what the rules say of c: a deny rule that matches wins, then
// an ask rule, then an allow rule. A shell line is denied or asked about when
// any program it may run matches (whatever hides it), and allowed only when
// every program it runs is matched by an allow rule, word by word as bash
// will run it — so `git add .; rm -rf ~` is not allowed by Bash(git add:*).
func (s *Set) Decide(c Call) Verdict {
	if s == nil || len(s.rules) == 0 {
		return Verdict{}
	}
	var runs []shellrule.Run
	known := true
	if c.Tool == "bash" {
		runs, known = shellrule.Runs(c.Command)
	}
	for _, e := range []Effect{Deny, Ask} {
		for _, r := range s.rules {
			if r.Effect == e && r.covers(c.Tool) && r.matchAny(c, runs) {
				return Verdict{Matched: true, Effect: e, Rule: r}
			}
		}
	}
	if !known && slices.ContainsFunc(s.rules, func(r Rule) bool { return r.Effect != Allow && r.tool == "Bash" }) {
		return Verdict{Unsure: true}
	}
	if c.Tool == "bash" {
		return s.allowLine(c.Command)
	}
	for _, r := range s.rules {
		if r.Effect == Allow && r.covers(c.Tool) && r.matchAll(c) {
			return Verdict{Matched: true, Effect: Allow, Rule: r}
		}
	}
	return Verdict{}
}

// allowLine allows a shell line when each program it runs, read strictly
// (no computed words, no redirection to a file), is matched by an allow rule;
// the verdict names the first.
func (s *Set) allowLine(cmd string) Verdict {
	calls, ok := shellrule.Calls(cmd)
	if !ok {
		return Verdict{}
	}
	var first *Rule
	for _, words := range calls {
		line := strings.Join(words, " ")
		i := slices.IndexFunc(s.rules, func(r Rule) bool {
			return r.Effect == Allow && r.covers("bash") && (!r.hasSpec || r.bash.MatchString(line))
		})
		if i < 0 {
			return Verdict{}
		}
		if first == nil {
			first = &s.rules[i]
		}
	}
	return Verdict{Matched: true, Effect: Allow, Rule: *first}
}

// matchAny is a deny or ask rule's test: any program of a shell line, any
// path of the call.
func (r Rule) matchAny(c Call, runs []shellrule.Run) bool {
	if !r.hasSpec {
		return true
	}
	switch r.tool {
	case "Bash":
		return slices.ContainsFunc(runs, r.matchRun)
	case "Read", "Edit":
		return slices.ContainsFunc(c.Paths, r.matchPath)
	}
	return r.matchOne(c)
}

// matchAll is an allow rule's test on a call that is not a shell line:
// every path.
func (r Rule) matchAll(c Call) bool {
	if !r.hasSpec {
		return true
	}
	switch r.tool {
	case "Read", "Edit":
		return len(c.Paths) > 0 && !slices.ContainsFunc(c.Paths, func(p string) bool { return !r.matchPath(p) })
	}
	return r.matchOne(c)
}

// matchOne tests the call's one thing: a fetch's host, a task's agent.
func (r Rule) matchOne(c Call) bool {
	switch r.tool {
	case "WebFetch":
		u, err := url.Parse(c.URL)
		if err != nil {
			return false
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if d, ok := strings.CutPrefix(r.spec, "*."); ok {
			return strings.HasSuffix(host, "."+d)
		}
		return host == r.spec
	case "Task":
		return c.Agent == strings.TrimSpace(r.spec)
	}
	return false
}

// matchRun tests one program: its words joined, or, when bash computes the
// rest, whether the known head could begin what the rule names.
func (r Rule) matchRun(run shellrule.Run) bool {
	s := strings.Join(run.Words, " ")
	if r.bash.MatchString(s) {
		return true
	}
	return run.Cut && (strings.HasPrefix(r.head, s) || strings.HasPrefix(s, r.head))
}

// matchPath tests a real path against the pattern: "*" within a name, "**"
// across directories, and a pattern matches what lies beneath what it names.
func (r Rule) matchPath(p string) bool {
	p = filepath.ToSlash(filepath.Clean(p))
	return globMatch(r.pattern, p) || globMatch(r.pattern+"/**", p)
}

// globMatch matches a gitignore-like pattern: ** is any number of path
// segments.
func globMatch(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(ps) {
			if ps[i] == "**" {
				for k := j; k <= len(ns); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j == len(ns) {
				return false
			}
			if ok, _ := path.Match(ps[i], ns[j]); !ok {
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(ns)
	}
	return match(0, 0)
}

// String is the rule as `dsh config` and /permissions show it.
func (r Rule) String() string { return r.Effect.String() + " " + r.Text }
