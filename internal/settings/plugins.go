package settings

import (
	"fmt"

	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/plugin"
	"github.com/dsh-dev/dsh/internal/skills"
)

// plugins is what the session's enabled plugins add to its options.
type plugins struct {
	commands []command.Dir
	skills   []skills.Dir
	agents   []agents.Dir
	hooks    []config.Hook
	mcp      []mcp.ServerConfig
	notices  []string
}

// loadPlugins gathers the enabled plugins of a session in the project root.
// A plugin the project chose (plugin.Plugin.Project) runs its hooks and MCP
// servers only when the user trusts the project, as the project's own hooks
// and servers; its commands, skills and agents are the user's installed
// files and are offered either way. With off (the settings file whose
// disableAllHooks says so), no plugin's hooks run.
func loadPlugins(root string, getenv func(string) string, trusted bool, off string) plugins {
	var out plugins
	found, err := plugin.Find(root, getenv)
	if err != nil {
		out.notices = append(out.notices, "plugins: "+err.Error())
	}
	note := func(errs []error) {
		for _, e := range errs {
			out.notices = append(out.notices, e.Error())
		}
	}
	for _, p := range found {
		if !p.Enabled {
			continue
		}
		// ${CLAUDE_PLUGIN_ROOT} in its commands, skills and agents.
		vars := map[string]string{"CLAUDE_PLUGIN_ROOT": p.Root}
		dirs, errs := p.CommandPaths()
		note(errs)
		for _, d := range dirs {
			out.commands = append(out.commands, command.Dir{Path: d, Namespace: p.Name, Vars: vars, Label: "plugin:" + p.Name})
		}
		dirs, errs = p.SkillPaths()
		note(errs)
		for _, d := range dirs {
			out.skills = append(out.skills, skills.Dir{Path: d, Namespace: p.Name, Vars: vars})
		}
		dirs, errs = p.AgentPaths()
		note(errs)
		for _, d := range dirs {
			out.agents = append(out.agents, agents.Dir{Path: d, Namespace: p.Name, Vars: vars})
		}
		docs, errs := p.Hooks()
		note(errs)
		servers, errs := p.MCPServers(getenv)
		note(errs)
		var hs []config.Hook
		for _, d := range docs {
			h, notes, err := config.ClaudeHooks(d.JSON, d.Source)
			out.notices = append(out.notices, notes...)
			if err != nil {
				out.notices = append(out.notices, err.Error()+"; its hooks are ignored")
				continue
			}
			hs = append(hs, h...)
		}
		if p.Project && !trusted && len(hs)+len(servers) > 0 {
			out.notices = append(out.notices, fmt.Sprintf("plugin %s: hooks and MCP servers ignored: the project enabled it, and a project may not run commands unless you trust it "+
				"(the chat asks; or list it in trusted_projects in the user's file)", p.ID))
			continue
		}
		if off != "" {
			hs = nil // disableAllHooks: config says so
		}
		// ${CLAUDE_PLUGIN_ROOT} in a hook's command is the shell's to expand.
		for _, h := range hs {
			h.Env = []string{"CLAUDE_PLUGIN_ROOT=" + p.Root}
			out.hooks = append(out.hooks, h)
		}
		out.mcp = append(out.mcp, servers...)
	}
	return out
}
