package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"syscall"

	"github.com/dsh-dev/dsh/internal/acp"
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
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
	fs.StringVar(&o.Script, "script", "", "the JSON turns of --provider script")
	fs.BoolVar(&o.AllowOutside, "allow-outside", false, "let tools touch paths outside the session's directory")
	fs.BoolVar(&o.Verbose, "verbose", false, "log protocol diagnostics to stderr")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr(io, fs, "unexpected argument %q", fs.Arg(0))
	}
	mode, err := agent.ParseMode(o.Mode)
	if err != nil {
		return usageErr(io, fs, "%v", err)
	}
	if o.Script != "" && o.Provider != "script" {
		return usageErr(io, fs, "--script needs --provider script")
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

// acpProvider returns the provider sessions use, resolved when a session first
// needs the model.
func acpProvider(_ IO, o acpOptions) func() (provider.Provider, error) {
	return func() (provider.Provider, error) {
		if o.Provider == "script" {
			b, err := os.ReadFile(o.Script)
			if err != nil {
				return nil, err
			}
			var s struct {
				Turns []tmpTurn `json:"turns"`
			}
			if err := json.Unmarshal(b, &s); err != nil {
				return nil, err
			}
			return &tmpScript{turns: s.Turns}, nil
		}
		return nil, fmt.Errorf("provider %q: not wired yet", o.Provider)
	}
}

// dshVersion is dsh's module version, "(devel)" for a local build.
func dshVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// TODO(acp helper): throwaway stand-in for internal/provider/script until it lands.
type tmpScript struct {
	mu    sync.Mutex
	turns []tmpTurn
}

type tmpTurn struct {
	Thinking      string `json:"thinking"`
	Text          string `json:"text"`
	WaitForCancel bool   `json:"wait_for_cancel"`
	ToolCalls     []struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args jsontext.Value `json:"args"`
	} `json:"tool_calls"`
}

func (s *tmpScript) Name() string { return "script" }

func (s *tmpScript) Stream(ctx context.Context, _ provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	s.mu.Lock()
	if len(s.turns) == 0 {
		s.mu.Unlock()
		return nil, fmt.Errorf("script: no more turns")
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	s.mu.Unlock()
	var parts []provider.Part
	if t.Thinking != "" {
		if onDelta != nil {
			onDelta(provider.Delta{Type: provider.DeltaThinking, Text: t.Thinking})
		}
		parts = append(parts, provider.Part{Type: provider.PartThinking, Text: t.Thinking})
	}
	if t.Text != "" {
		if onDelta != nil {
			onDelta(provider.Delta{Type: provider.DeltaText, Text: t.Text})
		}
		parts = append(parts, provider.Part{Type: provider.PartText, Text: t.Text})
	}
	if t.WaitForCancel {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	stop := provider.StopEndTurn
	for _, c := range t.ToolCalls {
		parts = append(parts, provider.Part{Type: provider.PartToolUse, ID: c.ID, Name: c.Name, Args: c.Args})
		stop = provider.StopToolUse
	}
	return &provider.Response{Message: provider.Message{Role: provider.RoleAssistant, Parts: parts}, StopReason: stop}, nil
}
