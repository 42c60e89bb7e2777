package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"mvdan.cc/sh/v3/syntax"

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
	ModeReadOnly    Mode = "read-only"    // refuse every call that changes files or runs commands
)

// Modes lists every mode, for help texts and mode pickers.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModeBypass, ModeReadOnly}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q (want one of default, accept-edits, bypass, read-only)", s)
}

// Decision is the user's answer to a permission request.
type Decision int

// The decisions.
const (
	AllowOnce   Decision = iota
	AllowAlways          // remembered for the rest of the session: per tool, or per command prefix
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
}

// Permitter asks the user about a call. An error means no answer could be had; a
// cancelled ctx cancels the turn.
type Permitter func(ctx context.Context, req PermissionRequest) (Decision, error)

// gate is what the mode says about a call before anyone is asked.
type gate int

const (
	gateRun gate = iota
	gateAsk
	gateRefuse
)

func modeGate(m Mode, p tool.Permission) gate {
	if p == tool.PermNone {
		return gateRun
	}
	switch m {
	case ModeBypass:
		return gateRun
	case ModeReadOnly:
		return gateRefuse
	case ModeAcceptEdits:
		if p == tool.PermEdit {
			return gateRun
		}
		return gateAsk
	case ModeDefault:
		return gateAsk
	}
	return gateAsk // an unknown mode asks rather than runs
}

// allowKeys are the remembered approvals a call needs, all of them, to run without
// asking: one per command a shell call would run (so "always allow `ls`" never
// covers `ls; rm -rf ~`), else the tool itself. ok is false when the call cannot be
// remembered at all (a command that does not parse, or runs a computed name).
func allowKeys(name string, args []byte, c card.Call, p tool.Permission) (keys []string, ok bool) {
	cmd, isCmd := commandOf(args, c, p)
	if !isCmd {
		return []string{"tool:" + name}, true
	}
	prefixes, ok := CommandPrefixes(cmd)
	if !ok || len(prefixes) == 0 {
		return nil, false
	}
	for _, pre := range prefixes {
		keys = append(keys, "command:"+pre)
	}
	return keys, true
}

// commandOf finds the shell command a call runs: the title of a terminal card, or,
// for an execute call shown otherwise (a background job), a "command" argument.
func commandOf(args []byte, c card.Call, p tool.Permission) (string, bool) {
	if t, ok := c.(*card.TerminalCall); ok {
		return t.Title, true
	}
	if p != tool.PermExecute {
		return "", false
	}
	var a struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Command == nil {
		return "", false
	}
	return *a.Command, true
}

// subcommanded are programs whose first argument names what they do, so "always
// allow" covers `git status` but not `git push`.
var subcommanded = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"npx": true, "cargo": true, "make": true, "docker": true, "kubectl": true,
	"pip": true, "pip3": true, "uv": true, "gh": true, "dotnet": true, "mvn": true,
	"gradle": true, "deno": true, "just": true, "poetry": true, "rustup": true,
}

// CommandPrefixes parses a shell command and returns the prefix of every simple
// command it would run, command substitutions and pipelines included: the program,
// plus its subcommand for programs like git or go (`git commit -m x` → "git commit").
// ok is false when the command does not parse or a program name is not a plain word
// (`$CMD args`), because such a command cannot be approved by prefix.
func CommandPrefixes(cmd string) (prefixes []string, ok bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, false
	}
	ok = true
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, isCall := n.(*syntax.CallExpr)
		if !isCall || len(ce.Args) == 0 {
			return true
		}
		prog := ce.Args[0].Lit()
		if prog == "" {
			ok = false
			return false
		}
		pre := prog
		if subcommanded[prog] && len(ce.Args) > 1 {
			if sub := ce.Args[1].Lit(); sub != "" && !strings.HasPrefix(sub, "-") {
				pre += " " + sub
			}
		}
		if !seen[pre] {
			seen[pre] = true
			prefixes = append(prefixes, pre)
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return prefixes, true
}
