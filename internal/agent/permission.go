package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// Mode decides which tool calls the agent asks the user about.
type Mode string

// The permission modes.
const (
	ModeDefault     Mode = "default"      // ask before changing files and running commands
	ModeAcceptEdits Mode = "accept-edits" // ask only before running commands
	ModeBypass      Mode = "bypass"       // never ask
	// ModeAuto runs commands and edits without asking because commands run in
	// the sandbox; it exists only where the sandbox works (Config.Auto).
	ModeAuto     Mode = "auto"
	ModeReadOnly Mode = "read-only" // refuse every call that changes files or runs commands
	// ModePlan is read-only while the agent plans: it may read, search and
	// fetch, and it ends by presenting a plan (the plan tool), whose approval
	// switches the session to the mode the user chooses.
	ModePlan Mode = "plan"
)

// Modes lists every mode, for help texts and mode pickers.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModeAuto, ModeBypass, ModeReadOnly, ModePlan}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown permission mode %q (want one of %s)", s, strings.Join(names, ", "))
}

// Decision is the user's answer to a permission request.
type Decision int

// The decisions.
const (
	AllowOnce   Decision = iota
	AllowAlways          // remembered for the rest of the session: what the request's Approval names
	Reject
)

// PermissionRequest is what a Permitter is asked about: one call, with its card so
// the user sees exactly what would happen.
type PermissionRequest struct {
	CallID     string
	Tool       string
	Args       []byte
	Card       card.Call
	Permission tool.Permission
	// Approval says what "always" would remember (Label), and whether it can
	// (Remember false: offer only once and reject).
	Approval tool.Approval
}

// Permitter asks the user about a call. An error means no answer could be had; a
// cancelled ctx cancels the turn.
type Permitter func(ctx context.Context, req PermissionRequest) (Decision, error)

// QuestionRequest is a tool's question to the user, with the call's card so
// the user sees what it is about (the plan).
type QuestionRequest struct {
	CallID   string
	Tool     string
	Card     card.Call
	Question tool.Question
}

// Asker puts a question to the user and returns the answer; the zero Answer
// means the user chose none of the choices. An error means no answer could
// be had; a cancelled ctx cancels the turn.
type Asker func(ctx context.Context, q QuestionRequest) (card.Answer, error)

// gate is what the mode says about a call before anyone is asked.
type gate int

const (
	gateRun gate = iota
	gateAsk
	gateRefuse
)

// risk is what the paths a call changes say about it, whatever its tool.
type risk struct {
	// gitInternal: a path inside a .git directory, whose config and hooks make
	// later git commands run programs.
	gitInternal bool
	// steering: a file that steers later sessions (see steeringNames), which
	// an unasked edit could turn into hooks, a wider mode or instructions.
	steering string
	// outside: a path outside the workspace (only with --allow-outside).
	outside bool
}

// steeringNames are the files and folders, at any depth of a root, that dsh
// or Claude Code read to configure, instruct or extend later sessions:
// settings and hooks, custom commands, skills and agents, MCP servers, the
// instruction files the context builder reads in every directory, plugins.
var steeringNames = []string{".dsh", ".claude", ".agents", ".claude-plugin", ".mcp.json", "AGENTS.md", "CLAUDE.md"}

// reason says, for the prompt, why a risky call cannot be remembered.
func (r risk) reason() string {
	switch {
	case r.gitInternal:
		return "it changes a file inside .git/, whose config and hooks can make git run programs"
	case r.steering != "":
		return "it changes " + r.steering + ", a file that sets up later sessions: their settings, hooks, tools or instructions"
	case r.outside:
		return "it changes a file outside the workspace"
	}
	return ""
}

func modeGate(m Mode, p tool.Permission, ap tool.Approval, r risk) gate {
	if p == tool.PermNone {
		return gateRun
	}
	switch m {
	case ModeBypass:
		return gateRun
	case ModeReadOnly:
		if ap.Opaque {
			return gateAsk // it may only read; the user knows
		}
		return gateRefuse
	case ModePlan:
		// Nothing that changes files or runs a command runs, not even a
		// command known to be safe (the user's additions to that list may
		// write). A fetch only reads: it is asked about as in the default
		// mode; another program's tool is asked about as in read-only.
		if ap.Opaque || ap.ReadsOnly && p == tool.PermExecute {
			return gateAsk
		}
		return gateRefuse
	case ModeAcceptEdits:
		if p == tool.PermEdit && !r.gitInternal && r.steering == "" {
			return gateRun
		}
		return gateAsk
	case ModeAuto:
		// Only what is confined runs unasked: commands in the sandbox (auto is
		// only ever in force with it, see Agent.SetMode) and edits of the
		// workspace; a fetch or an MCP tool reaches past the sandbox.
		if p == tool.PermEdit && !r.gitInternal && r.steering == "" && !r.outside || p == tool.PermExecute && ap.Confined && !ap.Opaque {
			return gateRun
		}
		return gateAsk
	case ModeDefault:
		return gateAsk
	}
	return gateAsk // an unknown mode asks rather than runs
}

// pathRisk judges the paths a call changes against the session's workspace:
// where they lead, symlinks followed, as the tool will find them.
func (a *Agent) pathRisk(paths []string) risk {
	var r risk
	if a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return r
	}
	ws := a.c.Tools.Workspace
	// Where each root's own steering files really are: a repository's
	// .claude may be a link to a folder of another name.
	var steered []string
	if len(paths) > 0 {
		for _, root := range ws.Roots() {
			for _, n := range steeringNames {
				if f, err := ws.Locate(filepath.Join(root, n)); err == nil && f.Real() != filepath.Join(root, n) {
					steered = append(steered, filepath.Clean(f.Real()))
				}
			}
		}
	}
	for _, p := range paths {
		real := p
		if f, err := ws.Locate(p); err == nil {
			real = f.Real()
		} else if !filepath.IsAbs(real) {
			real = filepath.Join(ws.Cwd(), real)
		}
		real = filepath.Clean(real)
		if !ws.Contains(real) {
			r.outside = true
		}
		for c := range strings.SplitSeq(filepath.ToSlash(real), "/") {
			if strings.EqualFold(c, ".git") {
				r.gitInternal = true
			}
		}
		if r.steering == "" {
			r.steering = steering(ws.Roots(), steered, p, real)
		}
	}
	return r
}

// steering is the path p as called when it, really at real, is or lies in a
// file that steers later sessions: by a name of steeringNames at any depth
// below a root (case-insensitively, as some file systems match names), under
// where a root's steering name leads (steered), or, outside the workspace
// (--allow-outside), by such a name anywhere in it or in ~/.config/dsh (the
// user's own settings and hooks, which every project runs); else "".
func steering(roots, steered []string, p, real string) string {
	for _, s := range steered {
		if real == s || strings.HasPrefix(real, s+string(filepath.Separator)) {
			return p
		}
	}
	rel := real // outside every root: all of it
	for _, root := range roots {
		if r, err := filepath.Rel(root, real); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = r
			break
		}
	}
	prev := ""
	for c := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if rel == real && strings.EqualFold(prev, ".config") && strings.EqualFold(c, "dsh") {
			return p
		}
		for _, n := range steeringNames {
			if strings.EqualFold(c, n) {
				return p
			}
		}
		prev = c
	}
	return ""
}

// BypassOff is why the bypass mode is refused: the settings file from names
// turns it off, as Claude Code's disableBypassPermissionsMode does.
func BypassOff(from string) error {
	return fmt.Errorf("the bypass mode is turned off by disableBypassPermissionsMode in %s", from)
}

// ErrNoSandbox is why the auto mode is refused: commands would run unconfined.
var ErrNoSandbox = errors.New("the auto mode needs the sandbox, and bash commands here run without it (start dsh with --sandbox on, on a Linux kernel with Landlock)")
