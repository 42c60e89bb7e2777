package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dsh-dev/dsh/internal/config"
)

type configOptions struct {
	Flags config.Flags
}

const configSummary = `Prints the effective settings and where each came from: the user's file
($XDG_CONFIG_HOME/dsh/config.toml, else ~/.config/dsh/config.toml), the
project's (.dsh/config.toml in the current directory), the environment, a flag
or the default. The project wins over the user, the environment over both, and
flags over everything. Secrets are never printed.

Keys (TOML):
  provider = "anthropic"            anthropic, openai or script
  base_url = "http://127.0.0.1:11434/v1"
  model = "claude-sonnet-5-5"
  mode = "default"                  permission mode
  sandbox = "on"                    off, on or network-off
  thinking = "adaptive"             off, adaptive, low … max, or a token budget
  context_window = 200000           or [context_window] "MODEL" = TOKENS
  safe_commands = ["make test"]     commands bash runs without asking
  trusted_projects = ["~/src/app"]  user file only: projects whose file may set
                                    base_url, mcp, safe_commands, any mode and
                                    sandbox = "off"
  [mcp.NAME]  command = "npx", args = [...], env = {K = "${VAR}"}
              or url = "https://…", type = "http" | "sse", headers = {…}`

func runConfigCmd(_ context.Context, io IO, args []string) error {
	var o configOptions
	fs := newFlags(io, "config", "", configSummary)
	fs.StringVar(&o.Flags.Provider, "provider", "", "as for dsh run")
	fs.StringVar(&o.Flags.BaseURL, "base-url", "", "the provider's base URL")
	fs.StringVar(&o.Flags.Model, "model", "", "as for dsh run")
	fs.StringVar(&o.Flags.Mode, "mode", "", "as for dsh run")
	fs.StringVar(&o.Flags.Sandbox, "sandbox", "", "off, on or network-off")
	fs.StringVar(&o.Flags.Thinking, "thinking", "", "off, adaptive, a level or a token budget")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "takes no arguments")
	}
	return runConfig(io, o)
}

func runConfig(io IO, o configOptions) error {
	c, err := config.Load(io.Cwd, io.Getenv)
	if err != nil {
		return err
	}
	if c, err = c.WithFlags(o.Flags); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Files:")
	for _, f := range c.Files {
		var state []string
		if !f.Exists {
			state = append(state, "not found")
		}
		if f.Scope == "project" && f.Exists && !f.Trusted {
			state = append(state, "not trusted")
		}
		note := ""
		if len(state) > 0 {
			note = "(" + strings.Join(state, ", ") + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Scope, f.Path, note)
	}
	fmt.Fprintln(tw, "\nSettings:")
	for _, s := range c.Settings() {
		v := s.Value
		if v == "" {
			v = "(default)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, v, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(c.Notices) > 0 {
		fmt.Fprintln(io.Out, "\nIgnored:")
		for _, n := range c.Notices {
			fmt.Fprintf(io.Out, "  %s\n", n)
		}
	}
	return nil
}
