package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/dsh-dev/dsh/internal/acp"
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/session"
)

const acpSummary = `Runs dsh as an Agent Client Protocol agent on stdin and stdout, for Zed and
other ACP editors. Each session works in the directory the editor opens it in.
Only protocol messages go to stdout; diagnostics go to stderr (--verbose for more).`

type acpOptions struct {
	SessionDir   string
	Mode         string
	Provider     string
	Model        string
	Script       string
	AllowOutside bool
	Verbose      bool
}

func runAcpCmd(ctx context.Context, io IO, args []string) error {
	o := acpOptions{Mode: string(agent.ModeDefault)}
	fs := newFlags(io, "acp", "", acpSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.StringVar(&o.Mode, "mode", o.Mode, "permission mode sessions start in: default, accept-edits, bypass or read-only")
	fs.StringVar(&o.Provider, "provider", "", "model provider: anthropic, openai or script (default: from the environment)")
	fs.StringVar(&o.Model, "model", "", "model name (default: the provider's)")
	fs.StringVar(&o.Script, "script", "", "play back the JSON turns in `FILE` (the script provider, for tests)")
	fs.BoolVar(&o.AllowOutside, "allow-outside", false, "let tools touch paths outside the session's directory")
	fs.BoolVar(&o.Verbose, "verbose", false, "log protocol diagnostics to stderr")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	mode, err := agent.ParseMode(o.Mode)
	if err != nil {
		return usageErr(io, fs, "%v", err)
	}
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	// A client that goes away closes stdout too: writes must fail with EPIPE, not
	// kill dsh before it has stopped its commands and closed its logs. A handled
	// signal (unlike an ignored one) is not inherited by the commands dsh runs.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	return acp.Serve(ctx, io.In, io.Out, acp.Options{
		SessionDir:   dir,
		Mode:         mode,
		Model:        o.Model,
		AllowOutside: o.AllowOutside,
		KeepEnv:      keepEnv(io),
		Provider:     acpProvider(io, o),
		Version:      dshVersion(),
		Logger:       slog.New(slog.NewTextHandler(io.Err, &slog.HandlerOptions{Level: level})),
		Now:          io.Now,
	})
}

// acpProvider returns the provider sessions use. It is built when a prompt first
// needs it, so that the editor can start dsh and replay sessions without a key,
// and a missing key is reported on the prompt, saying what to set.
func acpProvider(io IO, o acpOptions) func() (provider.Provider, error) {
	return func() (provider.Provider, error) {
		return providers.FromEnv(io.Getenv, providers.Flags{Provider: o.Provider, Model: o.Model, Script: o.Script})
	}
}

// dshVersion is dsh's module version, "(devel)" for a local build.
func dshVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
