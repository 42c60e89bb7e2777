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
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/frontmatter"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Agent is one custom agent.
type Agent struct {
	Name        string
	Display     string // the name as its file writes it ("Code Reviewer"), if that is not Name
	Description string
	// Tools are the tools it may use, as dsh names them; nil: every tool the
	// session lets a subagent have.
	Tools []string
	// Disallowed are tools it may not use (disallowedTools), as dsh names them.
	Disallowed []string
	// Ignored are the Claude Code tools its file names that dsh has not, each
	// with why: they are left out, not refused.
	Ignored []string
	// Model is the model it runs ("" or "inherit": the session's).
	Model  string
	Prompt string // its system prompt: the file's body
	Path   string // the file
	Repo   bool   // the repository's file, not the user's
	// Untrusted: the repository's file, in a project the user does not trust.
	Untrusted bool
}

// Dir is a directory of agent files, its subfolders included.
type Dir struct {
	Path string
	Root string // "": the user's own directory
	// Trusted says the user trusts the project Root: its agents may choose
	// their model, and are offered without the bound of an untrusted one's.
	Trusted bool
	// Namespace, if set, prefixes the names of the directory's agents
	// ("plugin:agent"), as Claude Code names a plugin's; Vars are what
	// ${NAME} in their prompts expands to (CLAUDE_PLUGIN_ROOT).
	Namespace string
	Vars      map[string]string
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
	if c := claudehome.Dir(getenv); c != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(c, "agents")})
	}
	for _, d := range []string{".dsh", ".claude"} {
		dirs = append(dirs, Dir{Path: filepath.Join(root, d, "agents"), Root: root})
	}
	return dirs
}

const (
	maxFile        = 64 << 10
	maxDescription = 1024
)

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
// (mcp__server__tool) kept; "" for a Claude Code tool dsh has not.
func ToolName(n string) string {
	if i := strings.IndexByte(n, '('); i > 0 && strings.HasSuffix(n, ")") {
		n = n[:i]
	}
	if d, ok := claudeTools[n]; ok {
		return d
	}
	return n
}

// All reads the agents of dirs, subfolders included; the first of a name
// wins. What cannot be read or is malformed is skipped and told in the error.
// There is no bound on how many: Listed bounds what the model is told of.
func All(dirs []Dir) ([]Agent, error) {
	var out []Agent
	var errs []error
	seen := map[string]bool{}
	isMarkdown := func(name string) bool { return strings.EqualFold(filepath.Ext(name), ".md") }
	for _, d := range dirs {
		var files []workspace.ProjectEntry
		var err error
		if d.Root != "" {
			rel, rerr := filepath.Rel(d.Root, d.Path)
			if rerr != nil {
				errs = append(errs, rerr)
				continue
			}
			files, err = workspace.WalkProject(d.Root, rel, maxFile, isMarkdown)
		} else {
			files, err = workspace.WalkOwn(d.Path, maxFile, isMarkdown)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("agents in %s: %w", d.Path, err))
		}
		for _, f := range files {
			path := filepath.Join(d.Path, filepath.FromSlash(f.Rel))
			if f.More {
				errs = append(errs, fmt.Errorf("agent %s: larger than %d bytes", path, maxFile))
				continue
			}
			a, err := parse(f.Data, strings.TrimSuffix(filepath.Base(f.Rel), filepath.Ext(f.Rel)))
			if err != nil {
				errs = append(errs, fmt.Errorf("agent %s: %w", path, err))
				continue
			}
			if d.Namespace != "" {
				a.Name = d.Namespace + ":" + a.Name
			}
			for k, v := range d.Vars {
				a.Prompt = strings.ReplaceAll(a.Prompt, "${"+k+"}", v)
			}
			a.Path, a.Repo, a.Untrusted = path, d.Root != "", d.Root != "" && !d.Trusted
			if seen[a.Name] {
				continue
			}
			if a.Untrusted && a.Model != "" {
				errs = append(errs, fmt.Errorf("agent %s: model %q ignored: the project is not trusted, so the agent runs the session's model", path, a.Model))
				a.Model = ""
			}
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out, errors.Join(errs...)
}

// Listed are the agents the model is told of, within the budget of what
// agents may add to every request (an untrusted repository's within a
// smaller one); notice says, once, how many were left out.
func Listed(as []Agent) (listed []Agent, notice string) {
	listed, left := frontmatter.Fit(as, func(a Agent) int { return len(a.Name) + len(a.Description) + 4 }, func(a Agent) bool { return a.Untrusted })
	if left > 0 {
		notice = fmt.Sprintf("%d custom agents are not listed to the model: their descriptions pass the %d KiB budget (an untrusted repository's, %d KiB); /agents lists them all, and the model can still start one by name",
			left, frontmatter.Budget>>10, frontmatter.UntrustedBudget>>10)
	}
	return listed, notice
}

// agentKeys are the front matter keys of Claude Code's agent files.
var agentKeys = []string{"name", "description", "tools", "disallowedTools", "disallowed-tools", "model", "color",
	"permissionMode", "skills", "hooks", "mcpServers", "memory", "effort", "maxTurns", "background", "isolation", "initialPrompt"}

// Parse reads an agent file: front matter with name and description (tools,
// model and Claude Code's other fields optional), then the system prompt.
func Parse(b []byte) (Agent, error) { return parse(b, "") }

// parse reads an agent file whose name, if its front matter has none, is
// file. A display name ("Code Reviewer") gives the name code-reviewer; a
// description past 1,024 bytes is cut.
func parse(b []byte, file string) (Agent, error) {
	front, body, ok, err := frontmatter.Split(b)
	if err != nil {
		return Agent{}, err
	}
	if !ok {
		return Agent{}, errors.New("no front matter (a --- block with name and description)")
	}
	f := frontmatter.Parse(front, agentKeys...)
	display := strings.TrimSpace(f.String("name"))
	if display == "" {
		display = file
	}
	a := Agent{Name: frontmatter.Name(display), Description: frontmatter.Cut(strings.Join(strings.Fields(f.String("description")), " "), maxDescription),
		Model: strings.TrimSpace(f.String("model")), Prompt: strings.TrimSpace(string(body))}
	if display != a.Name {
		a.Display = display
	}
	switch {
	case display == "":
		return Agent{}, errors.New("front matter: no name")
	case a.Name == "":
		return Agent{}, fmt.Errorf("name %q: want letters or digits", display)
	case a.Description == "":
		return Agent{}, errors.New("front matter: no description")
	}
	if tools, ok := f.List(false, "tools"); ok {
		a.Tools, a.Ignored = toolList(tools)
	} else if f.Has("tools") { // not every tool: what it meant is not known
		return Agent{}, errors.New("tools: want a comma-separated list or a list of names")
	}
	if no, ok := f.List(false, "disallowedTools", "disallowed-tools"); ok {
		a.Disallowed, _ = toolList(no)
	}
	if a.Model == "inherit" {
		a.Model = ""
	}
	return a, nil
}

// toolList is a list of tools as dsh names them, each once; Claude Code's
// tools dsh has not are left out and named in ignored.
func toolList(names []string) (tools, ignored []string) {
	tools = []string{}
	for _, t := range names {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		switch d := ToolName(t); {
		case d == "":
			ignored = append(ignored, t+" (dsh has no such tool)")
		case !slices.Contains(tools, d):
			tools = append(tools, d)
		}
	}
	return tools, ignored
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
