// Package agents finds the custom agents a session's task tool may start:
// Markdown files whose YAML front matter names the agent, says when to use it
// and which tools and model it gets, and whose body is its system prompt —
// Claude Code's subagent format, so its .claude/agents files work unchanged.
// A project's agents are the repository's files, read inside it only
// (workspace.ReadProjectFile's rule) and capped; an agent's tools only narrow
// what the session offers, never widen it. Until the user trusts the project,
// what its agents add to every request is bounded and their model is not
// theirs to choose.
package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Agent is one custom agent.
type Agent struct {
	Name        string
	Description string
	// Tools are the tools it may use, as dsh names them; nil: every tool the
	// session lets a subagent have.
	Tools []string
	// Disallowed are tools it never gets (disallowedTools), whatever Tools says.
	Disallowed []string
	// Ignored are the Claude Code tools its file names that dsh has not, each
	// with why: they are left out, not refused.
	Ignored []string
	// Model is the model it runs ("" or "inherit": the session's).
	Model  string
	Prompt string // its system prompt: the file's body
	Path   string // the file
	Repo   bool   // the repository's file, not the user's
}

// Dir is a directory of agent files.
type Dir struct {
	Path string
	Root string // "": the user's own directory
	// Trusted says the user trusts the project Root: its agents may choose
	// their model, and are offered without the bound of an untrusted one's.
	Trusted bool
	// Plugin names the plugin the directory is of: its agents are
	// PLUGIN:NAME, as Claude Code namespaces them.
	Plugin string
}

// Dirs are where agents are looked for, in order of precedence: the user's
// own ($XDG_CONFIG_HOME/dsh/agents, else ~/.config/dsh/agents, then
// ~/.claude/agents), so a repository cannot replace an agent the user relies
// on, then the project's .dsh/agents and .claude/agents.
func Dirs(root string, getenv func(string) string) []Dir {
	var dirs []Dir
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		dirs = append(dirs, Dir{Path: filepath.Join(x, "dsh", "agents")})
	} else if h := getenv("HOME"); filepath.IsAbs(h) {
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".config", "dsh", "agents")})
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		dirs = append(dirs, Dir{Path: filepath.Join(h, ".claude", "agents")})
	}
	for _, d := range []string{".dsh", ".claude"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "agents"), Root: root})
	}
	return dirs
}

const (
	maxFile        = 64 << 10
	maxDescription = 1024
	maxAgents      = 100
	// maxUntrusted bounds the bytes of names and descriptions an untrusted
	// repository's agents add to every request (as the task tool's description).
	maxUntrusted = 8 << 10
)

// validName is Claude Code's rule: lowercase letters, digits and hyphens.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// claudeTools maps Claude Code's tool names to dsh's; "" is one dsh has no
// counterpart of.
var claudeTools = map[string]string{
	"Bash": "bash", "Read": "read", "Edit": "edit", "MultiEdit": "edit", "Write": "write",
	"Grep": "grep", "Glob": "glob", "LS": "ls", "WebFetch": "web_fetch", "TodoWrite": "todo_write",
	"BashOutput": "job_output", "KillShell": "job_kill", "KillBash": "job_kill",
	"Task": "task", "Agent": "task", "AskUserQuestion": "ask_user", "ExitPlanMode": "plan",
	"Skill": "skill", "NotebookRead": "read", "LSP": "diagnostics",
	"WebSearch": "", "NotebookEdit": "", "SlashCommand": "", "TodoRead": "",
	"ListMcpResourcesTool": "", "ReadMcpResourceTool": "", "EnterPlanMode": "",
}

// ToolName is a tool as dsh names it: Claude Code's names are mapped (a
// permission rule's "Bash(git add:*)" is its tool's), dsh's and MCP tools'
// (mcp__server__tool) kept; ok is false for a Claude Code tool dsh has not.
func ToolName(n string) (name string, ok bool) {
	if i := strings.IndexByte(n, '('); i > 0 && strings.HasSuffix(n, ")") {
		n = n[:i]
	}
	if d, known := claudeTools[n]; known {
		return d, d != ""
	}
	return n, true
}

// All reads the agents of dirs; the first of a name wins. What cannot be read
// or is malformed is skipped and told in the error.
func All(dirs []Dir) ([]Agent, error) {
	var out []Agent
	var errs []error
	seen := map[string]bool{}
	untrusted, bounded := 0, false // bytes so far of an untrusted repository's, and whether some were left out
	for _, d := range dirs {
		entries, err := os.ReadDir(d.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("agents in %s: %w", d.Path, err))
			}
			continue
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || e.IsDir() {
				continue
			}
			if len(out) == maxAgents {
				errs = append(errs, fmt.Errorf("agents in %s: more than %d; the rest are not offered", d.Path, maxAgents))
				break
			}
			path := filepath.Join(d.Path, e.Name())
			b, err := read(d, e.Name())
			if err != nil {
				errs = append(errs, fmt.Errorf("agent %s: %w", path, err))
				continue
			}
			a, err := Parse(b)
			if err != nil {
				errs = append(errs, fmt.Errorf("agent %s: %w", path, err))
				continue
			}
			a.Path, a.Repo = path, d.Root != ""
			if d.Plugin != "" {
				a.Name = d.Plugin + ":" + a.Name
			}
			if seen[a.Name] {
				continue
			}
			if d.Root != "" && !d.Trusted {
				n := len(a.Name) + len(a.Description) + 4
				if bounded || untrusted+n > maxUntrusted {
					bounded = true
					continue
				}
				untrusted += n
				if a.Model != "" {
					errs = append(errs, fmt.Errorf("agent %s: model %q ignored: the project is not trusted, so the agent runs the session's model", path, a.Model))
					a.Model = ""
				}
			}
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	if bounded {
		errs = append(errs, fmt.Errorf("the repository's agents past %d KiB of names and descriptions are not offered: the project is not trusted", maxUntrusted>>10))
	}
	return out, errors.Join(errs...)
}

// Parse reads an agent file: front matter with name and description (tools,
// model and Claude Code's other fields optional), then the system prompt.
func Parse(b []byte) (Agent, error) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return Agent{}, errors.New("no front matter (a --- block with name and description)")
	}
	front, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		if front, ok = bytes.CutSuffix(rest, []byte("\n---")); !ok {
			return Agent{}, errors.New("the front matter is not closed with ---")
		}
	}
	var f struct {
		Name        string    `yaml:"name"`
		Description string    `yaml:"description"`
		Tools       yaml.Node `yaml:"tools"`
		Disallowed  yaml.Node `yaml:"disallowedTools"`
		Model       string    `yaml:"model"`
	}
	if err := yaml.Unmarshal(front, &f); err != nil {
		return Agent{}, fmt.Errorf("front matter: %w", err)
	}
	a := Agent{Name: strings.TrimSpace(f.Name), Description: strings.Join(strings.Fields(f.Description), " "),
		Model: strings.TrimSpace(f.Model), Prompt: strings.TrimSpace(string(body))}
	switch {
	case a.Name == "":
		return Agent{}, errors.New("front matter: no name")
	case len(a.Name) > 64 || !validName().MatchString(a.Name):
		return Agent{}, fmt.Errorf("name %q: want lowercase letters, digits and hyphens, at most 64 characters", a.Name)
	case a.Description == "":
		return Agent{}, errors.New("front matter: no description")
	case len(a.Description) > maxDescription:
		return Agent{}, fmt.Errorf("description longer than %d characters", maxDescription)
	}
	tools, ignored, err := toolList(&f.Tools)
	if err != nil {
		return Agent{}, err
	}
	a.Tools, a.Ignored = tools, ignored
	if a.Disallowed, _, err = toolList(&f.Disallowed); err != nil {
		return Agent{}, fmt.Errorf("disallowedTools: %w", err)
	}
	if a.Model == "inherit" {
		a.Model = ""
	}
	return a, nil
}

// toolList reads tools: a comma list ("Read, Grep") or a YAML list; absent
// means every tool (nil), an empty list none. Claude Code's tools dsh has not
// are left out and named in ignored.
func toolList(n *yaml.Node) (tools, ignored []string, err error) {
	var names []string
	switch n.Kind {
	case 0:
		return nil, nil, nil
	case yaml.ScalarNode:
		for t := range strings.SplitSeq(n.Value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				names = append(names, t)
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, nil, errors.New("tools: want names")
			}
			names = append(names, strings.TrimSpace(c.Value))
		}
	case yaml.DocumentNode, yaml.MappingNode, yaml.AliasNode:
		return nil, nil, errors.New("tools: want a comma-separated list or a list of names")
	}
	out := []string{}
	for _, t := range names {
		d, ok := ToolName(t)
		switch {
		case !ok:
			ignored = append(ignored, t+" (dsh has no such tool)")
		case !slices.Contains(out, d):
			out = append(out, d)
		}
	}
	return out, ignored, nil
}

// read reads an agent file, capped: a project's inside its repository, the
// user's in their directory.
func read(d Dir, name string) ([]byte, error) {
	var b []byte
	var more bool
	var err error
	if d.Root != "" {
		rel, rerr := filepath.Rel(d.Root, filepath.Join(d.Path, name))
		if rerr != nil {
			return nil, rerr
		}
		b, more, err = workspace.ReadProjectFile(d.Root, rel, maxFile)
	} else {
		b, more, err = workspace.ReadOwnFile(filepath.Join(d.Path, name), maxFile)
	}
	if err != nil {
		return nil, err
	}
	if more {
		return nil, fmt.Errorf("larger than %d bytes", maxFile)
	}
	return b, nil
}

// Find returns the named agent.
func Find(as []Agent, name string) (Agent, bool) {
	for _, a := range as {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}
