package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/provider/script"
)

type runOptions struct {
	SessionDir   string
	Mode         string
	AllowOutside bool
	Color        colorMode
	Provider     providers.Flags
	Prompt       string
}

const runSummary = `Runs one agent turn in the current directory (the workspace root): the model
works with dsh's tools until it ends its turn, cards streaming to the terminal as
they happen. Permissions are asked on the terminal unless --mode decides them.
The session is logged; replay it with dsh replay. Exits non-zero if the turn
failed. Ctrl-C cancels the turn; a second Ctrl-C exits at once.

The model comes from the environment: ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL),
else OPENAI_API_KEY / OPENAI_BASE_URL (any OpenAI-compatible server), or
--provider script --script FILE.`

func runRunCmd(ctx context.Context, io IO, args []string) error {
	o := runOptions{Color: "auto"}
	fs := newFlags(io, "run", `"PROMPT"`, runSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.StringVar(&o.Mode, "mode", "default", "permission mode: default, accept-edits, bypass or read-only")
	fs.BoolVar(&o.AllowOutside, "allow-outside", false, "let tools touch paths outside the workspace root")
	fs.Var(&o.Color, "color", "colour output: auto, always or never")
	fs.StringVar(&o.Provider.Provider, "provider", "", "model provider: anthropic, openai or script (default: from the environment)")
	fs.StringVar(&o.Provider.Model, "model", "", "model name (default: the provider's)")
	fs.StringVar(&o.Provider.Script, "script", "", "script file for --provider script")
	fs.IntVar(&o.Provider.Thinking, "thinking", 0, "Anthropic extended thinking budget in tokens (0: off)")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || strings.TrimSpace(fs.Arg(0)) == "" {
		return usageErr(io, fs, "want one non-empty PROMPT (quote it)")
	}
	o.Prompt = fs.Arg(0)
	return runRun(ctx, io, o)
}

func runRun(ctx context.Context, io IO, o runOptions) error {
	mode, err := agent.ParseMode(o.Mode)
	if err != nil {
		return err
	}
	p, err := providers.FromEnv(io.Getenv, o.Provider)
	if err != nil {
		return err
	}
	stop, id, err := runAgentTurn(ctx, io, agentRun{
		Root: io.Cwd, AllowOutside: o.AllowOutside, SessionDir: o.SessionDir, Provider: p,
		Model: o.Provider.Model, Mode: mode, Prompt: o.Prompt, Color: o.Color.enabled(io),
	})
	if id != "" {
		fmt.Fprintf(io.Err, "session %s — replay it with: dsh replay %s\n", id, id)
	}
	if err != nil {
		return err
	}
	switch stop {
	case agent.StopEndTurn:
		return nil
	case agent.StopCancelled:
		return exitError{130}
	case agent.StopMaxTokens, agent.StopRefusal, agent.StopMaxTurns, agent.StopError:
		return fmt.Errorf("the turn ended early: %s", strings.ReplaceAll(string(stop), "_", " "))
	}
	return nil
}

type demoOptions struct {
	SessionDir string
	Dir        string
	Color      colorMode
}

const demoSummary = `Copies a small sample project into a new temporary directory (or --dir) and
runs a scripted session on it that uses every tool — read, edit, replace_all,
write (new and overwrite), bash (ok and failing), a background job and its
output, the todo list — so you see every card with no API key. The session is
logged like any other; the command ends by printing how to replay it.`

func runDemoCmd(ctx context.Context, io IO, args []string) error {
	o := demoOptions{Color: "auto"}
	fs := newFlags(io, "demo", "", demoSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.StringVar(&o.Dir, "dir", "", "where to put the sample project (default: a new temporary directory); must not exist or be empty")
	fs.Var(&o.Color, "color", "colour output: auto, always or never")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageErr(io, fs, "takes no arguments")
	}
	return runDemo(ctx, io, o)
}

func runDemo(ctx context.Context, io IO, o demoOptions) error {
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "dsh-demo-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := demo.Install(dir); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already holds files; pick an empty or new --dir: %w", dir, err)
		}
		return err
	}
	p, err := script.Parse(demo.Script)
	if err != nil {
		return fmt.Errorf("the built-in demo script: %w", err)
	}
	fmt.Fprintf(io.Err, "dsh demo: a scripted session in %s (no model, no API key)\n\n", dir)
	stop, id, err := runAgentTurn(ctx, io, agentRun{
		Root: dir, SessionDir: o.SessionDir, Provider: p, Mode: agent.ModeBypass,
		Prompt: demo.Prompt, Color: o.Color.enabled(io),
	})
	if err != nil {
		return err
	}
	if stop == agent.StopCancelled {
		return exitError{130}
	}
	fmt.Fprintf(io.Out, "\nThe demo ran in %s.\nReplay it:        dsh replay %s\nAs JSON:          dsh replay --json %s\nIn the browser:   dsh web\n", dir, id, id)
	return nil
}
