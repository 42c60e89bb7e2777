package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/settings"
	"github.com/dsh-dev/dsh/internal/version"
)

// sandboxUsage is the --sandbox flag's help, the same in every command.
const sandboxUsage = "`MODE` of the Landlock sandbox bash commands run in: off, on or network-off (default: the config's, else off)"

// settingsFlags are the flags of the settings a session uses, shared by every
// command that opens one (and dsh config): each means the same everywhere.
type settingsFlags struct{ in settings.Input }

func (f *settingsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.in.Flags.Mode, "mode", "", modeUsage())
	fs.StringVar(&f.in.Flags.Model, "model", "", "the model `NAME` (default: the config's, else the provider's)")
	fs.StringVar(&f.in.Flags.FallbackModel, "fallback-model", "", "the model `NAME` a turn goes on with when the model is overloaded or unavailable (default: the config's fallback_model)")
	fs.StringVar(&f.in.Flags.Provider, "provider", "", "model provider `NAME`: anthropic, openai, bedrock, vertex, azure or script (default: the config's, else from the environment)")
	fs.StringVar(&f.in.Flags.BaseURL, "base-url", "", "the provider's base `URL` (default: the config's, else ANTHROPIC_BASE_URL or OPENAI_BASE_URL)")
	fs.StringVar(&f.in.Flags.Thinking, "thinking", "", "thinking `LEVEL`: off, adaptive, low, medium, high, xhigh, max, or a token budget for Anthropic (default: the config's, else the provider's)")
	fs.StringVar(&f.in.Flags.Sandbox, "sandbox", "", sandboxUsage)
	fs.StringVar(&f.in.Script, "script", "", "play back the scripted turns in `FILE` (the script provider)")
	fs.StringVar(&f.in.SessionDir, "session-dir", "", "session logs go in `DIR` (default $XDG_STATE_HOME/dsh/sessions)")
	fs.BoolVar(&f.in.AllowOutside, "allow-outside", false, "let tools touch paths outside the workspace root")
	fs.Func("add-dir", "also work in `DIR`, confined, sandboxed and asked about like the workspace (repeatable)", func(d string) error {
		f.in.AddDirs = append(f.in.AddDirs, d)
		return nil
	})
}

// modeUsage is the --mode flag's help: every mode there is.
func modeUsage() string {
	names := make([]string, len(agent.Modes))
	for i, m := range agent.Modes {
		names[i] = string(m)
		if m == agent.ModeAuto {
			names[i] += " (needs --sandbox)"
		}
	}
	return "permission mode `MODE`: " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] +
		" (default: the config's, else default)"
}

// resolve resolves the settings of a session in the current directory.
func (f settingsFlags) resolve(ctx context.Context, io IO) (settings.Settings, error) {
	in := f.in
	in.Cwd, in.Getenv, in.Version = io.Cwd, io.Getenv, version.String()
	in.ExportEnv = io.ExportEnv
	return settings.Resolve(ctx, in)
}

// tellIgnored prints the project settings that were not applied.
func tellIgnored(io IO, st settings.Settings) {
	for _, n := range st.Ignored() {
		fmt.Fprintf(io.Err, "dsh: %s\n", n)
	}
}

// settingsErr reports a failed resolution: a command-line mistake with the
// command's usage, anything else as it is.
func settingsErr(io IO, fs *flag.FlagSet, err error) error {
	if settings.IsFlagError(err) {
		return usageErr(io, fs, "%v", err)
	}
	return err
}
