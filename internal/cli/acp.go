package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dsh-dev/dsh/internal/acp"
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/anthropic"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/openai"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/version"
)

const acpSummary = `Runs dsh as an Agent Client Protocol agent on stdin and stdout, for Zed and
other ACP editors. Each session works in the directory the editor opens it in.
Settings come from the config files (see dsh config), then the flags; each
session also reads its project's .dsh/config.toml for MCP servers and custom
commands. Only protocol messages go to stdout; diagnostics go to stderr
(--verbose for more).`

type acpOptions struct {
	SessionDir   string
	Script       string
	AllowOutside bool
	Verbose      bool
	Flags        config.Flags
}

func runAcpCmd(ctx context.Context, io IO, args []string) error {
	var o acpOptions
	fs := newFlags(io, "acp", "", acpSummary)
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory (default $XDG_STATE_HOME/dsh/sessions)")
	fs.StringVar(&o.Flags.Mode, "mode", "", "permission mode sessions start in: default, accept-edits, auto (needs --sandbox), bypass or read-only (default: the config's, else default)")
	fs.StringVar(&o.Flags.Sandbox, "sandbox", "", sandboxUsage)
	fs.StringVar(&o.Flags.Provider, "provider", "", "model provider: anthropic, openai or script (default: the config's, else from the environment)")
	fs.StringVar(&o.Flags.BaseURL, "base-url", "", "the provider's base URL")
	fs.StringVar(&o.Flags.Model, "model", "", "model name (default: the config's, else the provider's)")
	fs.StringVar(&o.Flags.Thinking, "thinking", "", "thinking: off, adaptive, low … max, or a token budget")
	fs.StringVar(&o.Script, "script", "", "play back the JSON turns in `FILE` (the script provider, for tests)")
	fs.BoolVar(&o.AllowOutside, "allow-outside", false, "let tools touch paths outside the session's directory")
	fs.BoolVar(&o.Verbose, "verbose", false, "log protocol diagnostics to stderr")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	if o.Script != "" && o.Flags.Provider == "" {
		o.Flags.Provider = "script"
	}
	cfg, err := config.Load(io.Cwd, io.Getenv)
	if err != nil {
		return err
	}
	if cfg, err = cfg.WithFlags(o.Flags); err != nil {
		return usageErr(io, fs, "%v", err)
	}
	mode := agent.ModeDefault
	if cfg.Mode != "" {
		if mode, err = agent.ParseMode(cfg.Mode); err != nil {
			return usageErr(io, fs, "%v", err)
		}
	}
	dir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	sb, err := sandboxOf(cfg)
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
	logger := slog.New(slog.NewTextHandler(io.Err, &slog.HandlerOptions{Level: level}))
	for _, n := range cfg.Notices {
		logger.Warn(n)
	}
	getenv := configEnv(io.Getenv, cfg)
	return acp.Serve(ctx, io.In, io.Out, acp.Options{
		SessionDir:   dir,
		Mode:         mode,
		Model:        acpModel(ctx, getenv, cfg, logger),
		Thinking:     cfg.Thinking,
		Models:       acpModels(getenv, cfg),
		AllowOutside: o.AllowOutside,
		Sandbox:      sb,
		SafeCommands: cfg.SafeCommands,
		KeepEnv:      keepEnv(io),
		Provider:     acpProvider(getenv, cfg, o.Script),
		Version:      version.String(),
		Logger:       logger,
		Now:          io.Now,
		Getenv:       io.Getenv,
	})
}

// configEnv reads the environment with the configuration's base URL in the
// provider's variable, which is where the providers read it.
func configEnv(getenv func(string) string, cfg config.Config) func(string) string {
	return func(k string) string {
		if cfg.BaseURL != "" && ((cfg.Provider == "anthropic" && k == "ANTHROPIC_BASE_URL") || (cfg.Provider == "openai" && k == "OPENAI_BASE_URL")) {
			return cfg.BaseURL
		}
		return getenv(k)
	}
}

// acpProvider returns the provider sessions use. It is built when a prompt first
// needs it, so that the editor can start dsh and replay sessions without a key,
// and a missing key is reported on the prompt, saying what to set.
func acpProvider(getenv func(string) string, cfg config.Config, script string) func() (provider.Provider, error) {
	return func() (provider.Provider, error) {
		return providers.FromEnv(getenv, providers.Flags{Provider: cfg.Provider, Model: cfg.Model, Script: script})
	}
}

// acpModel is the model sessions start with, named so that the model picker
// shows it: the configured one, else the first an OpenAI-compatible server
// serves (not OpenAI's default, which such a server does not have), else the
// provider's default.
func acpModel(ctx context.Context, getenv func(string) string, cfg config.Config, logger *slog.Logger) string {
	if cfg.Model != "" {
		return cfg.Model
	}
	switch provider := effectiveProvider(getenv, cfg); provider {
	case "anthropic":
		return anthropic.DefaultModel
	case "openai":
		if base := getenv("OPENAI_BASE_URL"); base != "" {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			m, err := models.FirstServed(ctx, models.Source{Provider: provider, APIKey: getenv("OPENAI_API_KEY"), BaseURL: base})
			if err == nil {
				return m
			}
			logger.Warn("choosing a model", "err", err)
		}
		return openai.DefaultModel
	case "script":
		return "script"
	}
	return ""
}

// effectiveProvider is the provider providers.FromEnv will pick.
func effectiveProvider(getenv func(string) string, cfg config.Config) string {
	switch {
	case cfg.Provider != "":
		return cfg.Provider
	case getenv("ANTHROPIC_API_KEY") != "":
		return "anthropic"
	case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
		return "openai"
	}
	return ""
}

// acpModels lists the models of the provider for the model picker, the
// built-in list when the provider cannot be asked.
func acpModels(getenv func(string) string, cfg config.Config) func(context.Context) ([]models.Info, error) {
	return func(ctx context.Context) ([]models.Info, error) {
		switch p := effectiveProvider(getenv, cfg); p {
		case "anthropic":
			return models.List(ctx, models.Source{Provider: p, APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: getenv("ANTHROPIC_BASE_URL")})
		case "openai":
			return models.List(ctx, models.Source{Provider: p, APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL")})
		}
		return models.Builtin(""), nil
	}
}
