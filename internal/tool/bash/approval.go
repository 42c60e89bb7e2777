package bash

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-dev/dsh/internal/tool"
)

func (b *bashTool) approval(p params) tool.Approval { return CommandApproval(p.Command) }

// CommandApproval is what "always allow" of a command line remembers: one key
// per command the line would run, so approving `ls` never covers `ls; rm -rf ~`.
func CommandApproval(cmd string) tool.Approval {
	prefixes, ok := CommandPrefixes(cmd)
	if !ok || len(prefixes) == 0 {
		return tool.Approval{}
	}
	keys := make([]string, len(prefixes))
	for i, pre := range prefixes {
		keys[i] = "command:" + pre
	}
	return tool.Approval{Keys: keys, Label: strings.Join(prefixes, ", "), Remember: true}
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
