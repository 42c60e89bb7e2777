// Package command is the one registry of slash commands, shared by the terminal
// chat and the editor (ACP's available commands): the built-in ones, and the
// user's custom commands — Markdown files whose body becomes the prompt.
package command

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	// Plugin names the plugin the directory is of: its commands are
	// /PLUGIN:NAME, as Claude Code namespaces them.
	Plugin string
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
	if h := getenv("HOME"); filepath.IsAbs(h) {
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".claude", "commands")})
	}
	for _, d := range []string{".dsh", ".claude"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "commands"), Root: root})
	}
	return dirs
}

// maxCommandFile bounds a custom command's file: it becomes a prompt.
const maxCommandFile = 256 << 10

// All returns the custom commands found in dirs, sorted by name; an earlier
// directory wins over a later one. Subdirectories give namespaced names (git/commit.md is
// "git:commit"). Files that cannot be read are reported in the error, the rest
// are still returned.
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
			files, err = walkOwn(dir.Path, isMarkdown)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("commands in %s: %w", dir.Path, err))
		}
		for _, f := range files {
			name := strings.ReplaceAll(strings.TrimSuffix(f.Rel, filepath.Ext(f.Rel)), "/", ":")
			path := filepath.Join(dir.Path, filepath.FromSlash(f.Rel))
			if f.Rel == "." { // a plugin's manifest may name a file, not a folder
				name, path = strings.TrimSuffix(filepath.Base(dir.Path), filepath.Ext(dir.Path)), dir.Path
			}
			if dir.Plugin != "" {
				name = dir.Plugin + ":" + name
			}
			if !validName(name) || seen[name] {
				continue
			}
			if f.More {
				errs = append(errs, fmt.Errorf("command %s: larger than %d bytes", path, maxCommandFile))
				continue
			}
			seen[name] = true
			out = append(out, parseCommand(f.Data, path, name))
		}
	}
	slices.SortFunc(out, func(a, b Command) int { return cmp.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// walkOwn reads the user's own command files: links are the user's to make,
// but each must lead to a regular file, read up to the cap.
func walkOwn(dir string, keep func(string) bool) ([]workspace.ProjectEntry, error) {
	var out []workspace.ProjectEntry
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !keep(d.Name()) {
			return nil
		}
		b, more, err := workspace.ReadOwnFile(path, maxCommandFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("command %s: %w", path, err))
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, workspace.ProjectEntry{Rel: filepath.ToSlash(rel), Data: b, More: more})
		return nil
	})
	return out, errors.Join(append(errs, err)...)
}

// parseCommand reads a custom command: an optional front matter block with a
// "description:" line, then the prompt.
func parseCommand(b []byte, path, name string) Command {
	body := strings.ReplaceAll(string(b), "\r\n", "\n")
	c := Command{Name: name, Where: Both, Source: path}
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		if front, after, ok := strings.Cut(rest, "\n---\n"); ok {
			body = after
			for line := range strings.SplitSeq(front, "\n") {
				k, v, _ := strings.Cut(line, ":")
				switch strings.TrimSpace(k) {
				case "description":
					c.Description = strings.Trim(strings.TrimSpace(v), `"'`)
				case "argument-hint":
					c.ArgHint = strings.Trim(strings.TrimSpace(v), `"'`)
				}
			}
		}
	}
	c.Body = strings.TrimLeft(body, "\n")
	if c.Description == "" {
		first, _, _ := strings.Cut(strings.TrimSpace(c.Body), "\n")
		c.Description = strings.TrimLeft(first, "# ")
		if len(c.Description) > 80 {
			c.Description = c.Description[:77] + "…"
		}
	}
	return c
}

// Skills are a command per skill: it has the model load the skill and apply
// it to what is typed after it, as Claude Code's skill commands do.
func Skills(ss []skills.Skill) []Command {
	out := make([]Command, 0, len(ss))
	for _, sk := range ss {
		out = append(out, Command{Name: sk.Name, Description: sk.Description, ArgHint: "[task]", Where: Both,
			Source: filepath.Join(sk.Dir, "SKILL.md"),
			Body:   "Load the skill " + sk.Name + " with the skill tool and follow it.\n\n$ARGUMENTS"})
	}
	return out
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
