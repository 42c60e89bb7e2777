package cli

import (
	"context"
	"fmt"

	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/sandbox"
)

// sandboxUsage is the --sandbox flag's help, the same in every command.
const sandboxUsage = "run bash commands in the Landlock sandbox: off, on or network-off (default: the config's, else off)"

// confinement is what the configuration (under the --sandbox flag) says about
// running commands: the sandbox and the user's known-safe commands.
type confinement struct {
	sandbox sandbox.Mode
	safe    []string
	windows config.ContextWindows
	models  func(context.Context) ([]models.Info, error) // what /model offers: the editor's picker's list
}

// loadConfinement reads the configuration files for the current directory. A
// sandbox that is asked for but cannot work here is an error, not a silent
// fallback: commands would run unconfined.
func loadConfinement(io IO, flag string) (confinement, error) {
	cfg, err := config.Load(io.Cwd, io.Getenv)
	if err != nil {
		return confinement{}, err
	}
	if cfg, err = cfg.WithFlags(config.Flags{Sandbox: flag}); err != nil {
		return confinement{}, err
	}
	for _, n := range cfg.Notices {
		fmt.Fprintf(io.Err, "dsh: %s\n", n)
	}
	sb, err := sandboxOf(cfg)
	if err != nil {
		return confinement{}, err
	}
	return confinement{sandbox: sb, safe: cfg.SafeCommands, windows: cfg.ContextWindow, models: acpModels(io.Getenv, cfg)}, nil
}

// sandboxOf is the sandbox the configuration asks for. One that cannot work
// here is an error, not a silent fallback: commands would run unconfined.
func sandboxOf(cfg config.Config) (sandbox.Mode, error) {
	var m sandbox.Mode
	if cfg.Sandbox != "" {
		if err := m.Set(cfg.Sandbox); err != nil {
			return m, fmt.Errorf("sandbox: %w", err)
		}
	}
	if m.Enabled() {
		if err := sandbox.Check(m); err != nil {
			return m, fmt.Errorf("the sandbox (%s) cannot work here: %w", m, err)
		}
	}
	return m, nil
}

// apply puts the confinement in a session's options.
func (c confinement) apply(o host.Options) host.Options {
	o.Sandbox, o.SafeCommands = c.sandbox, c.safe
	o.ContextWindows, o.Models = c.windows.For, c.models // per model: they follow /model
	return o
}
