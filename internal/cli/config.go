package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/dsh-dev/dsh/internal/settings"
)

type configOptions struct {
	settingsFlags
}

const configSummary = `Prints what a session in the current directory would use (dsh, dsh run and
dsh acp resolve their settings the same way), each value with where it came
from: the user's file
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
  checkpoint_exclude = ["*.db"]     files the checkpoints of /undo never copy,
                                    beside .env, *.pem, id_rsa and the like
  notify = false                    the chat does not ring or send a desktop
                                    notification (OSC 9) when a turn ends or a
                                    prompt waits while the terminal is away
  api_key_store = "file"            user file only: keep a key given to an
                                    editor's sign-in in the credentials file
                                    (beside this one), as dsh login does;
                                    "none" (the default) keeps nothing
  trusted_projects = ["~/src/app"]  user file only: projects whose file may set
                                    base_url, mcp, safe_commands, thinking,
                                    context_window, checkpoint_exclude, any
                                    mode and sandbox = "off"
  [projects."/abs/path"]            user file only, written by the chat's
  trust = "trusted"                 "Trust this folder?": the answer for the
  config_sha256 = "…"               project file with this hash
  [mcp.NAME]  command = "npx", args = [...], env = {K = "${VAR}"}
              or url = "https://…", type = "http" | "sse", headers = {…}
  [network]   allowed_domains = ["github.com", "*.npmjs.org"]
              denied_domains = ["gist.github.com"]
                                    sandboxed commands reach only these, through
                                    dsh's proxy (web_fetch too); a project's
                                    lists only narrow the user's
  [lsp]       wait = "3s"           how long an edit waits for diagnostics
  [lsp.go]    command = ["gopls"], enabled = false   (also python, typescript,
                                    rust, c): the language server for the files,
                                    started only in a folder you trust
  [[hooks.EVENT]]  matcher = "Bash", hooks = [{ command = "…", timeout = 60 }]
                                    Claude Code's hooks: PreToolUse, PostToolUse,
                                    UserPromptSubmit, Stop, SessionStart and
                                    Notification; also read from
                                    ~/.claude/settings.json and a trusted
                                    project's .claude/settings*.json`

func runConfigCmd(ctx context.Context, io IO, args []string) error {
	var o configOptions
	fs := newFlags(io, "config", "", configSummary)
	o.register(fs)
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "takes no arguments")
	}
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	return printConfig(io, st)
}

func printConfig(io IO, st settings.Settings) error {
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Files:")
	for _, f := range st.Config.Files {
		var state []string
		if !f.Exists {
			state = append(state, "not found")
		}
		if f.Scope == "project" && f.Exists && !f.Trusted {
			state = append(state, "not trusted")
		}
		if f.Changed {
			state = append(state, "changed since trusted")
		}
		note := ""
		if len(state) > 0 {
			note = "(" + strings.Join(state, ", ") + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Scope, f.Path, note)
	}
	fmt.Fprintln(tw, "\nSettings:")
	for _, s := range st.Entries() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, s.Value, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ns := st.Ignored(); len(ns) > 0 {
		fmt.Fprintln(io.Out, "\nIgnored:")
		for _, n := range ns {
			fmt.Fprintf(io.Out, "  %s\n", n)
		}
	}
	return nil
}
