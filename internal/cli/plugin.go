package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dsh-dev/dsh/internal/plugin"
)

const pluginSummary = `Manages Claude Code plugins: folders with a .claude-plugin/plugin.json
manifest beside commands/, agents/, skills/, hooks/hooks.json and .mcp.json.
A session uses the enabled ones of dsh's own (added here, kept in
$XDG_CONFIG_HOME/dsh/plugins, else ~/.config/dsh/plugins, where a plugin folder
put by hand counts too) and those Claude Code installed
(~/.claude/plugins/installed_plugins.json), enabled as its settings'
enabledPlugins say. A plugin's commands are /PLUGIN:NAME, its skills and agents
PLUGIN:NAME; ${CLAUDE_PLUGIN_ROOT} in its hooks, MCP servers and commands is
its folder. A plugin the project enables (its .claude/settings.json) or that is
installed for the project runs its hooks and MCP servers only once you trust
the project.

Subcommands:
  add PATH|GIT-URL|NAME@MARKETPLACE  add a plugin: a folder (used where it is),
                                     a git repository (cloned) or a plugin of
                                     a marketplace added before (install is the
                                     same)
  list                               the plugins, enabled or not, and where
                                     each is from
  remove NAME                        remove a plugin dsh added (uninstall is
                                     the same)
  enable NAME | disable NAME         turn a plugin on or off for dsh (Claude
                                     Code's too; its settings stay as they are)
  marketplace add PATH|GIT-URL       add a marketplace (.claude-plugin/
                                     marketplace.json): a folder or a git URL
  marketplace list                   the marketplaces added
  marketplace remove NAME            forget a marketplace`

func runPluginCmd(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "plugin", "SUBCOMMAND [args]", pluginSummary)
	if err := parse(io, fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usageErr(io, fs, "want a subcommand: add, list, remove, enable, disable or marketplace")
	}
	want := func(n int, what string) error {
		if len(rest) != n+1 {
			return usageErr(io, fs, "%s takes %s", rest[0], what)
		}
		return nil
	}
	switch rest[0] {
	case "add", "install":
		if err := want(1, "one PATH, GIT-URL or NAME@MARKETPLACE"); err != nil {
			return err
		}
		p, err := plugin.Add(ctx, io.Getenv, rest[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "Added the plugin %s (%s), enabled: a new session uses it.\n", p.ID, p.Root)
		return nil
	case "list":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		return listPlugins(io)
	case "remove", "uninstall":
		if err := want(1, "one NAME"); err != nil {
			return err
		}
		in, err := plugin.Remove(io.Getenv, rest[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "Removed the plugin %s.\n", in.ID)
		return nil
	case "enable", "disable":
		if err := want(1, "one NAME"); err != nil {
			return err
		}
		p, err := plugin.SetEnabled(io.Getenv, io.Cwd, rest[1], rest[0] == "enable")
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "The plugin %s is %sd for dsh from the next session on.\n", p.ID, rest[0])
		return nil
	case "marketplace":
		return runMarketplace(ctx, io, fs.Name(), rest[1:])
	}
	return usageErr(io, fs, "unknown subcommand %q: want add, list, remove, enable, disable or marketplace", rest[0])
}

func listPlugins(io IO) error {
	all, err := plugin.Find(io.Cwd, io.Getenv)
	if err != nil {
		fmt.Fprintf(io.Err, "dsh plugin: %v\n", err)
	}
	if len(all) == 0 {
		fmt.Fprintln(io.Out, "No plugins. Add one with dsh plugin add PATH|GIT-URL|NAME@MARKETPLACE.")
		return nil
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tVERSION\tSTATE\tFROM\tFOLDER")
	for _, p := range all {
		state := "disabled"
		if p.Enabled {
			state = "enabled"
		}
		from := p.From
		if from == "claude" {
			from = "Claude Code"
		}
		if p.Project {
			from += " (the project's)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, orDash(p.Version), state, from, p.Root)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runMarketplace(ctx context.Context, io IO, name string, args []string) error {
	bad := func(format string, a ...any) error {
		fmt.Fprintf(io.Err, "%s marketplace: %s\nRun '%s --help' for its usage.\n", name, fmt.Sprintf(format, a...), name)
		return errUsage
	}
	if len(args) == 0 {
		return bad("want add, list or remove")
	}
	switch args[0] {
	case "add":
		if len(args) != 2 {
			return bad("add takes one PATH or GIT-URL")
		}
		m, names, err := plugin.AddMarketplace(ctx, io.Getenv, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "Added the marketplace %s (%s). Its plugins: %s.\nInstall one with dsh plugin add NAME@%s.\n",
			m.Name, m.Path, strings.Join(names, ", "), m.Name)
		return nil
	case "list":
		if len(args) != 1 {
			return bad("list takes no arguments")
		}
		st, err := plugin.LoadState(io.Getenv)
		if err != nil {
			return err
		}
		if len(st.Marketplaces) == 0 {
			fmt.Fprintln(io.Out, "No marketplaces. Add one with dsh plugin marketplace add PATH|GIT-URL.")
		}
		for _, m := range st.Marketplaces {
			fmt.Fprintf(io.Out, "%s\t%s\t(from %s)\n", m.Name, m.Path, m.Source)
		}
		return nil
	case "remove":
		if len(args) != 2 {
			return bad("remove takes one NAME")
		}
		if err := plugin.RemoveMarketplace(io.Getenv, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(io.Out, "Removed the marketplace %s.\n", args[1])
		return nil
	}
	return bad("unknown subcommand %q: want add, list or remove", args[0])
}
