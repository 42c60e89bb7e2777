package cli

import (
	"context"
	"github.com/dsh-dev/dsh/internal/host"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/dsh-dev/dsh/internal/acp"
	"github.com/dsh-dev/dsh/internal/version"
)

const acpSummary = `Runs dsh as an Agent Client Protocol agent on stdin and stdout, for Zed and
other ACP editors. Each session works in the directory the editor opens it in.
Each session's settings are what dsh config prints in its directory: the
user's config file, its project's .dsh/config.toml (with the project's trust
rules), the environment, then these flags. Only protocol messages go to stdout; diagnostics go to stderr
(--verbose for more).`

type acpOptions struct {
	settingsFlags
	Verbose bool
}

func runAcpCmd(ctx context.Context, io IO, args []string) error {
	var o acpOptions
	fs := newFlags(io, "acp", "", acpSummary)
	o.register(fs)
	fs.BoolVar(&o.Verbose, "verbose", false, "log protocol diagnostics to stderr")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(io.Err, &slog.HandlerOptions{Level: level}))
	o.in.Logger = logger
	// The settings of the directory dsh acp starts in: flag mistakes show now,
	// and the model picker starts from their model.
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	// A client that goes away closes stdout too: writes must fail with EPIPE, not
	// kill dsh before it has stopped its commands and closed its logs. A handled
	// signal (unlike an ignored one) is not inherited by the commands dsh runs.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	return acp.Serve(ctx, io.In, io.Out, acp.Options{
		SessionDir: st.SessionDir,
		Setup: func(cwd string) (host.Setup, error) {
			sio := io
			sio.Cwd = cwd
			st, err := o.resolve(ctx, sio)
			if err != nil {
				return host.Setup{}, err
			}
			return host.Setup{Options: st.Options(), Ignored: st.Ignored()}, nil
		},
		Model:   st.Model,
		Version: version.String(),
		Logger:  logger,
		Now:     io.Now,
		Getenv:  io.Getenv,
	})
}
