// Package toolset assembles the tools a dsh session offers.
package toolset

import (
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/ask"
	"github.com/dsh-dev/dsh/internal/tool/bash"
	"github.com/dsh-dev/dsh/internal/tool/fetch"
	"github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/tool/plan"
	"github.com/dsh-dev/dsh/internal/tool/search"
	"github.com/dsh-dev/dsh/internal/tool/skill"
	"github.com/dsh-dev/dsh/internal/tool/task"
	"github.com/dsh-dev/dsh/internal/tool/todo"
)

// Options tune the tools.
type Options struct {
	// KeepEnv names secret-looking environment variables that commands may still see.
	KeepEnv []string
	// Extra tools are offered after the built-in ones (MCP servers' tools).
	Extra []tool.Tool
	// Sandbox confines shell commands (see bash.Options).
	Sandbox sandbox.Mode
	// Network, if set, filters the network of sandboxed commands and web_fetch
	// by domain.
	Network *netproxy.Proxy
	// SafeCommands are the user's additions to the commands that run unasked.
	SafeCommands []string
	// Skills offers the skill tool (the session has skills to load).
	Skills bool
	// Agents are the custom agents the task tool offers besides explore.
	Agents []agents.Agent
}

// New returns the registry of every dsh tool.
func New(o Options) *tool.Registry {
	tools := []tool.Tool{fs.Read(), fs.Write(), fs.Edit(), fs.Diagnostics()}
	tools = append(tools, search.Tools()...)
	tools = append(tools, bash.Tools(bash.Options{KeepEnv: o.KeepEnv, Sandbox: o.Sandbox, Network: o.Network, SafeCommands: o.SafeCommands})...)
	fo := fetch.Options{Network: o.Network}
	if o.Sandbox == sandbox.NetworkOff {
		fo.Offline = "web_fetch is off in this session: it runs with --sandbox network-off, so nothing may reach the network"
	}
	tools = append(tools, todo.Tool(), plan.Tool(), ask.Tool(), fetch.New(fo))
	if o.Skills {
		tools = append(tools, skill.Tool())
	}
	// The task tool asks the registry it is in whether an agent's tools only
	// read; the registry exists once the tool does.
	var reg *tool.Registry
	tools = append(tools, task.Tool(o.Agents, func(names []string) bool {
		for _, n := range names {
			if t, ok := reg.Get(n); !ok || !t.ReadOnly() {
				return false
			}
		}
		return true
	}))
	tools = append(tools, o.Extra...)
	reg = tool.NewRegistry(tools...)
	return reg
}

// All returns a registry of every tool a log may name, for presenting logs
// (dsh replay, dsh web): a session offers the skill tool only when it has
// skills, but its calls must replay as the cards they were.
func All() *tool.Registry { return New(Options{Skills: true}) }
