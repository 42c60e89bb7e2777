package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/settings"
)

type runOptions struct {
	sessionFlags
	Output string
	Prompt string
	// Rewind, instead of a prompt, puts the files back as they were before
	// change N of the session (0: lists the changes); Overwrite includes the
	// files the user changed since.
	Rewind    int
	Overwrite bool
	// Limits of the run: model round-trips, dollars, wall-clock time.
	MaxTurns  int
	MaxBudget float64
	Timeout   time.Duration
}

const runSummary = `Runs one agent turn in the current directory (the workspace root): the model
works with dsh's tools until it ends its turn, cards streaming to the terminal as
they happen. Permissions are asked on the terminal unless --mode decides them;
so are the model's questions (ask_user, a plan's approval).
The session is logged; replay it with dsh replay, go on with it with dsh -c (the
chat) or dsh run -c. Ctrl-C cancels the turn; a second Ctrl-C exits at once.

The prompt is taken as the chat takes it: @path attaches a file of the workspace
(@"a name" for one with spaces; an image goes as an image, and an absolute path
may name an image anywhere), @SERVER:URI an MCP server's resource, and a prompt
that starts with /NAME runs that slash command — a built-in one (/cost, /mcp,
/undo, /rewind …, its answer printed), a custom command of .dsh/commands or
.claude/commands, a skill, or an MCP prompt (/mcp__SERVER__PROMPT) — with the
rest as its arguments. /help lists them.

PROMPT "-", or no PROMPT with stdin not a terminal, reads the prompt from stdin
(then no permission can be asked: use --mode). Flags may come before or after it.

--output text prints the messages and cards; json prints one JSON object when the
turn ends: {"sessionId", "stopReason", "text" (the model's last message), "usage",
"error"}; stream-json prints one JSON object per line as things happen: every
record of the log ({"type": "user" | "assistant" | "tool_call" | "progress" |
"tool_result" | "turn_end" | …, with its cards, like dsh replay --json}) and the
moments between them ({"type": "delta", "delta": {"type": "text" | "thinking",
"text"}}, {"type": "model_request"}, {"type": "call_started", "callId"},
{"type": "permission", "callId", "tool", "decision"}, {"type": "question",
"callId", "tool", "answer"}, {"type": "usage", "usage"}).

--rewind N, instead of a prompt, puts the files of the session (-c, the default,
or --resume ID) back as they were before its change N, after showing the diff
and asking; files you changed since the agent did are kept unless --overwrite.
--rewind 0 lists the changes (each prompt and undo, with the files it changed).

--max-turns N ends the turn after N model round-trips (default 50);
--max-budget-usd X once its model calls (subagents' included) cost X US dollars,
priced as /cost prices them (the model's price must be known); --timeout D
(such as 90s or 10m) once it has run that long, its running commands stopped.
Each ends the turn with its own stop reason (max_turns, budget, timeout), logged
and printed. --fallback-model NAME (or fallback_model in config.toml) goes on
with another model when the model is overloaded or unavailable, said on the
turn's card.

Exit status: 0 the turn ended normally; 1 it failed (an error, the model's output
limit, a refusal) or dsh could not run it; 2 a mistake in the command line;
3 --max-turns was reached; 4 --max-budget-usd was reached; 5 --timeout was
reached; 130 it was cancelled (Ctrl-C).

The settings are what dsh config prints here: the config files, the
environment (ANTHROPIC_API_KEY, else OPENAI_API_KEY / OPENAI_BASE_URL for any
OpenAI-compatible server), then the flags; or --provider script --script FILE.`

// parseInterspersed parses flags that may come before, between or after the
// positional arguments (dsh run "hello" --mode bypass), which the flag package
// stops at; "--" ends the flags.
func parseInterspersed(io IO, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(io, fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runRunCmd(ctx context.Context, io IO, args []string) error {
	var o runOptions
	fs := newFlags(io, "run", `["PROMPT" | -]`, runSummary)
	o.register(fs)
	fs.StringVar(&o.Resume, "resume", "", "go on with session `ID` (see dsh sessions)")
	fs.StringVar(&o.Output, "output", "text", "what to print: text, json or stream-json")
	fs.IntVar(&o.Rewind, "rewind", -1, "instead of a prompt, put the files back as they were before change `N` (0 lists them)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "with --rewind: restore the files you changed since the agent did too")
	fs.IntVar(&o.MaxTurns, "max-turns", 0, "end the turn after `N` model round-trips (default 50)")
	fs.Float64Var(&o.MaxBudget, "max-budget-usd", 0, "end the turn once its model calls cost `X` US dollars")
	fs.DurationVar(&o.Timeout, "timeout", 0, "end the turn once it has run for `D` (such as 90s or 10m)")
	pos, err := parseInterspersed(io, fs, args)
	if err != nil {
		return err
	}
	switch {
	case o.MaxTurns < 0:
		return usageErr(io, fs, "--max-turns: want a positive number of round-trips, got %d", o.MaxTurns)
	case o.MaxBudget < 0 || math.IsNaN(o.MaxBudget) || math.IsInf(o.MaxBudget, 0):
		return usageErr(io, fs, "--max-budget-usd: want a positive amount of US dollars, got %v", o.MaxBudget)
	case o.Timeout < 0:
		return usageErr(io, fs, "--timeout: want a positive duration, got %v", o.Timeout)
	}
	switch o.Output {
	case "text", "json", "stream-json":
	default:
		return usageErr(io, fs, "--output: want text, json or stream-json, got %q", o.Output)
	}
	if o.Rewind >= 0 {
		return runRewindCmd(ctx, io, fs, o, pos)
	}
	fromStdin := false
	switch {
	case len(pos) > 1:
		return usageErr(io, fs, "want one PROMPT, got %d arguments (quote the prompt)", len(pos))
	case len(pos) == 1 && pos[0] == "-", len(pos) == 0 && !io.InIsTerminal && io.In != nil:
		fromStdin = true
		b, err := readAll(io.In)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		o.Prompt = string(b)
	case len(pos) == 1:
		o.Prompt = pos[0]
	}
	if strings.TrimSpace(o.Prompt) == "" {
		if fromStdin {
			return usageErr(io, fs, "the prompt read from stdin is empty")
		}
		return usageErr(io, fs, "want one non-empty PROMPT (quote it, or pipe it in)")
	}
	if o.Continue && o.Resume != "" {
		return usageErr(io, fs, "--continue and --resume do not go together")
	}
	if fromStdin {
		io.In = strings.NewReader("") // consumed: permissions cannot be asked
	}
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	tellIgnored(io, st)
	if o.MaxBudget > 0 {
		if err := st.CheckPrice(); err != nil {
			return usageErr(io, fs, "--max-budget-usd: %v", err)
		}
	}
	return runRun(ctx, io, o, &opener{io: io, o: o.sessionFlags, st: st, maxTurns: o.MaxTurns, maxCost: o.MaxBudget})
}

// runRewindCmd is dsh run --rewind: the session (the last one unless --resume)
// is reloaded and /rewind runs in its host, asking on the terminal.
func runRewindCmd(ctx context.Context, io IO, fs *flag.FlagSet, o runOptions, pos []string) error {
	if len(pos) > 0 {
		return usageErr(io, fs, "--rewind takes no PROMPT")
	}
	if o.Resume == "" {
		o.Continue = true
	}
	st, err := o.resolve(ctx, io)
	if err != nil {
		return settingsErr(io, fs, err)
	}
	op := &opener{io: io, o: o.sessionFlags, st: st}
	id, err := op.target()
	if err != nil {
		return err
	}
	s, err := op.open(id, nil)
	if err != nil {
		return err
	}
	typed := "/rewind"
	if o.Rewind > 0 {
		typed += " " + strconv.Itoa(o.Rewind)
		if o.Overwrite {
			typed += " --overwrite"
		}
	}
	_, err = runAgentTurn(ctx, io, s, agentRun{Prompt: typed, Color: o.Color.enabled(io), Output: "text"})
	return err
}

// maxStdinPrompt bounds a prompt read from stdin.
const maxStdinPrompt = 8 << 20

func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStdinPrompt+1))
	if err == nil && len(b) > maxStdinPrompt {
		err = fmt.Errorf("more than %d bytes", maxStdinPrompt)
	}
	return b, err
}

func runRun(ctx context.Context, io IO, o runOptions, op *opener) error {
	if err := op.st.CheckProvider(); err != nil {
		return err // before a session is logged
	}
	id, err := op.target()
	if err != nil {
		return err
	}
	s, err := op.open(id, nil)
	if err != nil {
		return err
	}
	r := agentRun{Prompt: o.Prompt, Color: o.Color.enabled(io), Output: o.Output}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, agent.ErrTimeLimit)
		defer cancel()
	}
	stop, err := runAgentTurn(ctx, io, s, r)
	if o.Output == "text" {
		fmt.Fprintf(io.Err, "session %s — replay it with: dsh replay %s · go on with: dsh -c\n", s.ID(), s.ID())
	}
	if err != nil {
		return err
	}
	return stopStatus(stop)
}

// stopStatus is the exit status of a turn that ended with stop.
func stopStatus(stop agent.StopReason) error {
	switch stop {
	case agent.StopEndTurn:
		return nil
	case agent.StopCancelled:
		return exitError{130}
	case agent.StopMaxTurns:
		return limitError{3, "the turn ended at its limit of model round-trips (--max-turns)"}
	case agent.StopBudget:
		return limitError{4, "the turn ended at its budget (--max-budget-usd)"}
	case agent.StopTimeout:
		return limitError{5, "the turn ended at its time limit (--timeout)"}
	case agent.StopMaxTokens, agent.StopRefusal, agent.StopError:
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

func runDemo(ctx context.Context, io IO, o demoOptions) (err error) {
	dir, where := o.Dir, o.Dir
	if dir == "" {
		d, mkErr := os.MkdirTemp("", "dsh-demo-")
		if mkErr != nil {
			return mkErr
		}
		// The log is all a replay needs: the sample project goes with the demo.
		defer func() { err = errors.Join(err, os.RemoveAll(d)) }()
		dir, where = d, "a temporary directory, now removed (--dir keeps the project)"
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
	sdir, err := session.Dir(o.SessionDir)
	if err != nil {
		return err
	}
	s, err := host.Create(host.Options{
		SessionDir: sdir, Root: dir, KeepEnv: settings.KeepEnv(io.Getenv), Mode: agent.ModeBypass, Now: io.Now, Warn: warner(io),
		Provider: func() (provider.Provider, error) { return p, nil },
	})
	if err != nil {
		return err
	}
	id := s.ID()
	stop, err := runAgentTurn(ctx, io, s, agentRun{Prompt: demo.Prompt, Color: o.Color.enabled(io), Output: "text"})
	if err != nil {
		return err
	}
	if stop == agent.StopCancelled {
		return exitError{130}
	}
	fmt.Fprintf(io.Out, "\nThe demo ran in %s.\nReplay it:        dsh replay %s\nAs JSON:          dsh replay --json %s\nIn the browser:   dsh web\n", where, id, id)
	return nil
}
