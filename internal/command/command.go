// Package command is the one registry of slash commands, shared by the terminal
// chat and the editor (ACP's available commands): the built-in ones, and the
// user's custom commands — Markdown files whose body becomes the prompt.
package command

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/frontmatter"
	"github.com/dsh-dev/dsh/internal/skills"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Where says which consumers offer a command.
type Where int

// The consumers.
const (
	Terminal Where = 1 << iota
	Editor
	Both = Terminal | Editor
)

// Command is one slash command.
type Command struct {
	Name        string // without the slash
	Description string
	ArgHint     string // e.g. "[focus]", shown after the name
	Where       Where
	// Body is a custom command's prompt template ($ARGUMENTS is replaced); empty
	// for built-in commands, which the consumer carries out itself.
	Body string
	// Source is the file a custom command came from.
	Source string
	// Run is what the file's front matter says about running it: the tools
	// its turn may use unasked or not at all, its model, who may run it.
	Run frontmatter.Invocation
	// Untrusted: the repository's file, in a project the user does not
	// trust; Repo: the repository's file.
	Untrusted, Repo bool
	// Vars are what ${NAME} in its body expands to besides the session's
	// (its directory's: a plugin's root).
	Vars map[string]string
	// Skill is set for a skill's command: its body is SKILL.md's, read when
	// it runs.
	Skill *skills.Skill
}

// Custom reports whether the command is a user's prompt template.
func (c Command) Custom() bool { return c.Source != "" }

// MCP says the command is an MCP server's prompt, which the host expands.
func (c Command) MCP() bool { return strings.HasPrefix(c.Source, "mcp:") }

// Expand returns a custom command's prompt for the arguments typed after it,
// as Claude Code expands one: $ARGUMENTS is all of them; $ARGUMENTS[N] the
// word N from 0 (words, or quoted with ' or "); $N the word N, from 1 as the
// command files written for Claude Code's first commands count, or from 0 in
// a body that uses $0, as its skills count; ${NAME} one of vars
// (CLAUDE_PROJECT_DIR). A body that takes no argument gets them after it.
func (c Command) Expand(args string, vars map[string]string) string {
	args = strings.TrimSpace(args)
	body := varRef().ReplaceAllStringFunc(c.Body, func(ref string) string {
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
	positional := argRef().MatchString(body)
	if !strings.Contains(body, "$ARGUMENTS") && !positional {
		if args == "" {
			return body
		}
		return strings.TrimRight(body, "\n") + "\n\n" + args
	}
	if positional {
		words := splitArgs(args)
		first := 1
		if zeroRef().MatchString(body) {
			first = 0
		}
		body = argRef().ReplaceAllStringFunc(body, func(ref string) string {
			m := argRef().FindStringSubmatch(ref)
			n, from := m[2], first
			if m[1] != "" {
				n, from = m[1], 0
			}
			i, _ := strconv.Atoi(n)
			if i -= from; i >= 0 && i < len(words) {
				return words[i]
			}
			return ""
		})
	}
	return strings.ReplaceAll(body, "$ARGUMENTS", args)
}

// BodyShell matches a command's body's `!` commands: !`git status`.
var BodyShell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })

// argRef is a positional argument ($ARGUMENTS[N] or $N), zeroRef the $0 that
// says a body counts from 0, varRef a ${NAME} of Expand's vars.
var (
	argRef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$ARGUMENTS\[([0-9]{1,2})\]|\$([0-9]{1,2})`) })
	zeroRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$0([^0-9]|$)`) })
	varRef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[A-Z_][A-Z0-9_]*\}`) })
)

// splitArgs splits what was typed after a command into words; a word in
// quotes (' or ") keeps its spaces.
func splitArgs(s string) []string {
	var out []string
	var b strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// Parse splits "/name args" into the name and the arguments; ok is false for
// input that is not a slash command (a path such as /tmp/x is not one).
func Parse(input string) (name, args string, ok bool) {
	s := strings.TrimLeft(input, " \t")
	if !strings.HasPrefix(s, "/") {
		return "", "", false
	}
	s = s[1:]
	name, args, _ = strings.Cut(s, " ")
	if name == "" || !validName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

func validName(n string) bool {
	for _, c := range n {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

// Dir is a directory of custom commands. Root is set for a project's
// directory (Path is below it): its files are the repository's, read only
// inside it (workspace.ReadProjectFile's rule), so a command file that links
// to a key or to /dev/zero is refused, not sent as a prompt.
type Dir struct {
	Path string
	Root string // "": the user's own directory
	// Trusted says the user trusts the project Root: its commands' front
	// matter may pre-approve tools and choose a model.
	Trusted bool
	// Label says where its commands come from, in their descriptions:
	// "user" or "project" by default ("(project:frontend)" for a subfolder's).
	Label string
	// Namespace, if set, prefixes its commands' names ("plugin:command"),
	// as Claude Code names a plugin's; Vars are what ${NAME} expands to in
	// their bodies (CLAUDE_PLUGIN_ROOT).
	Namespace string
	Vars      map[string]string
}

// Dirs are where custom commands are looked for, in order of precedence: the
// user's $XDG_CONFIG_HOME/dsh/commands (else ~/.config/dsh/commands) and
// ~/.claude/commands first, so a repository cannot replace a command the user
// relies on, then the project's .dsh/commands, and its .claude/commands for
// people moving over from Claude Code.
func Dirs(root string, getenv func(string) string) []Dir {
	var dirs []Dir
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(x, "dsh", "commands")})
	} else if h := getenv("HOME"); h != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".config", "dsh", "commands")})
	}
	if c := claudehome.Dir(getenv); c != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(c, "commands")})
	}
	for _, d := range []string{".dsh", ".claude"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "commands"), Root: root})
	}
	return dirs
}

// maxCommandFile bounds a custom command's file: it becomes a prompt.
const maxCommandFile = 256 << 10

// All returns the custom commands found in dirs, sorted by name; an earlier
// directory wins over a later one. A subfolder's command is named by its
// file, as Claude Code names it, the subfolder said in its description
// (frontend/test.md is /test, "(project:frontend)"); where that name is
// taken, by the subfolder too (/frontend:test). Files that cannot be read
// are reported in the error, the rest are still returned.
func All(dirs []Dir) ([]Command, error) {
	var out []Command
	seen := map[string]bool{}
	var errs []error
	isMarkdown := func(name string) bool { return strings.EqualFold(filepath.Ext(name), ".md") }
	for _, dir := range dirs {
		var files []workspace.ProjectEntry
		var err error
		if dir.Root != "" {
			rel, rerr := filepath.Rel(dir.Root, dir.Path)
			if rerr != nil {
				errs = append(errs, rerr)
				continue
			}
			files, err = workspace.WalkProject(dir.Root, rel, maxCommandFile, isMarkdown)
		} else {
			files, err = workspace.WalkOwn(dir.Path, maxCommandFile, isMarkdown)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("commands in %s: %w", dir.Path, err))
		}
		label := dir.Label
		switch {
		case label != "":
		case dir.Root != "":
			label = "project"
		default:
			label = "user"
		}
		// The top folder's files first: they keep their names.
		slices.SortStableFunc(files, func(a, b workspace.ProjectEntry) int {
			return cmp.Compare(strings.Count(a.Rel, "/"), strings.Count(b.Rel, "/"))
		})
		for _, f := range files {
			rel := strings.TrimSuffix(f.Rel, filepath.Ext(f.Rel))
			if f.Rel == "." { // a plugin's manifest may name a file, not a folder
				rel = strings.TrimSuffix(filepath.Base(dir.Path), filepath.Ext(dir.Path))
			}
			sub, base := "", rel
			if i := strings.LastIndex(rel, "/"); i >= 0 {
				sub, base = rel[:i], rel[i+1:]
			}
			name := base
			if dir.Namespace != "" {
				name = dir.Namespace + ":" + base
			}
			if seen[name] && sub != "" {
				name = strings.TrimPrefix(dir.Namespace+":"+strings.ReplaceAll(rel, "/", ":"), ":")
			}
			path := filepath.Join(dir.Path, filepath.FromSlash(f.Rel))
			if !validName(name) || seen[name] {
				continue
			}
			if f.More {
				errs = append(errs, fmt.Errorf("command %s: larger than %d bytes", path, maxCommandFile))
				continue
			}
			seen[name] = true
			c := parseCommand(f.Data, path, name)
			where := label
			if sub != "" {
				where += ":" + strings.ReplaceAll(sub, "/", ":")
			}
			c.Description += " (" + where + ")"
			c.Repo, c.Untrusted, c.Vars = dir.Root != "", dir.Root != "" && !dir.Trusted, dir.Vars
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return cmp.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// parseCommand reads a custom command: an optional front matter block
// (description, argument-hint, allowed-tools, model…), then the prompt.
func parseCommand(b []byte, path, name string) Command {
	c := Command{Name: name, Where: Both, Source: path}
	front, body, ok, err := frontmatter.Split(b)
	if ok && err == nil {
		f := frontmatter.Parse(front, frontmatter.CommandKeys...)
		c.Description = frontmatter.Cut(strings.Join(strings.Fields(f.String("description")), " "), maxDescription)
		c.Run = f.Invocation()
		c.ArgHint = c.Run.ArgHint
	} else {
		body = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	c.Body = strings.TrimLeft(string(body), "\n")
	if c.Description == "" {
		first, _, _ := strings.Cut(strings.TrimSpace(c.Body), "\n")
		c.Description = frontmatter.Cut(strings.TrimLeft(first, "# "), 80)
	}
	return c
}

// maxDescription is the longest description a command keeps, as Claude Code
// cuts a skill's.
const maxDescription = 1024

// Skills are a command per skill: its body is the skill's, with its
// arguments, as Claude Code runs a skill the user names. A skill the user
// may not run (user-invocable: false) has none.
func Skills(ss []skills.Skill) []Command {
	out := make([]Command, 0, len(ss))
	for i, sk := range ss {
		if sk.Hidden {
			continue
		}
		hint := sk.ArgHint
		if hint == "" {
			hint = "[task]"
		}
		desc := sk.Description
		if sk.Display != "" { // the name as SKILL.md writes it
			desc = sk.Display + ": " + desc
		}
		out = append(out, Command{Name: sk.Name, Description: desc, ArgHint: hint, Where: Both,
			Source: filepath.Join(sk.Dir, "SKILL.md"), Run: sk.Invocation, Repo: sk.Root != "", Untrusted: sk.Untrusted,
			Vars: sk.Vars, Skill: &ss[i]})
	}
	return out
}

// Text is the command's prompt for args: its body expanded (Expand) with
// vars and its own; a skill's body is read now, and says where the skill's
// folder is, so its "python scripts/x.py" can be run from there.
func (c Command) Text(args string, vars map[string]string) (string, error) {
	all := maps.Clone(vars)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, c.Vars)
	if c.Skill != nil {
		body, err := c.Skill.Body()
		if err != nil {
			return "", fmt.Errorf("the skill %s: %w", c.Name, err)
		}
		all["CLAUDE_SKILL_DIR"] = c.Skill.Dir
		c.Body = "Base directory for this skill: " + c.Skill.Dir + " (run its scripts from there)\n\n" + body
	}
	return c.Expand(args, all), nil
}

// With adds, after cmds, the commands of more whose name no command has (a
// session's own: its skills' and its MCP servers' prompts).
func With(cmds, more []Command) []Command {
	out := slices.Clone(cmds)
	for _, c := range more {
		if _, ok := Find(out, c.Name); !ok {
			out = append(out, c)
		}
	}
	return out
}

// Find returns the named command.
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// For returns the commands a consumer offers.
func For(cmds []Command, w Where) []Command {
	var out []Command
	for _, c := range cmds {
		if c.Where&w != 0 {
			out = append(out, c)
		}
	}
	return out
}

// Prompt is the system prompt's list of the custom commands the model may run
// with the skill tool, "" without any: those whose file does not forbid it
// (disable-model-invocation), within the budget of what commands may add to
// every request (an untrusted repository's within a smaller one); notice
// says, once, how many were left out.
func Prompt(cmds []Command) (prompt, notice string) {
	offered := slices.DeleteFunc(slices.Clone(cmds), func(c Command) bool { return c.Run.NoModel || c.Skill != nil || !c.Custom() || c.MCP() })
	listed, left := frontmatter.Fit(offered, func(c Command) int { return len(c.Name) + len(c.ArgHint) + len(c.Description) + 6 },
		func(c Command) bool { return c.Untrusted })
	if len(listed) == 0 {
		return "", ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Commands\n\nThe user's custom slash commands. When the user asks for one, or a task is what one does, run it with the skill tool (its name and arguments) and follow what it returns:\n")
	for _, c := range listed {
		repo := ""
		if c.Repo {
			repo = " [the repository's file, its author's words, not the user's]"
		}
		fmt.Fprintf(&b, "- /%s", c.Name)
		if c.ArgHint != "" {
			fmt.Fprintf(&b, " %s", c.ArgHint)
		}
		fmt.Fprintf(&b, ": %s%s\n", c.Description, repo)
	}
	if left > 0 {
		notice = fmt.Sprintf("%d custom commands are not listed to the model: their descriptions pass the %d KiB budget (an untrusted repository's, %d KiB); /help lists them all",
			left, frontmatter.Budget>>10, frontmatter.UntrustedBudget>>10)
		fmt.Fprintf(&b, "\n(%d more commands are not listed here.)\n", left)
	}
	return strings.TrimRight(b.String(), "\n"), notice
}
