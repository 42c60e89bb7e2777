// Package cli implements dsh's commands. Each command has an options struct and a
// run function that gets its I/O, environment and clock injected, so tests drive
// the same code the binary runs.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/dsh-dev/dsh/internal/host"
)

// IO is everything a command may touch of its process.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
	Now      func() time.Time
	Cwd      string
	// OutIsTerminal reports whether Out is a terminal (colour and width follow).
	OutIsTerminal bool
	// InIsTerminal and ErrIsTerminal report whether In and Err are terminals
	// (the chat needs both In and Out; dsh run's spinner goes to a terminal Err).
	InIsTerminal, ErrIsTerminal bool
	// Width and Height are the terminal's size, 0 when unknown.
	Width, Height int
	// Interrupts delivers Ctrl-C; nil in tests that do not need it.
	Interrupts <-chan os.Signal
	// ExportEnv: the process's environment is dsh's own, and takes Claude
	// Code's settings env for what its commands inherit (settings.Input).
	ExportEnv bool
}

// System returns the real process's IO.
func System() IO {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	io := IO{In: pollable(os.Stdin), Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Now: time.Now, Cwd: cwd,
		Interrupts: notifyInterrupts(), ExportEnv: true}
	if fd := int(os.Stdout.Fd()); term.IsTerminal(fd) {
		io.OutIsTerminal = true
		if w, h, err := term.GetSize(fd); err == nil {
			io.Width, io.Height = w, h
		}
	}
	io.InIsTerminal = isTerminal(os.Stdin)
	io.ErrIsTerminal = isTerminal(os.Stderr)
	return io
}

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, io IO, args []string) error
}

func commands() []command {
	return []command{
		{"acp", "", "run as an Agent Client Protocol agent on stdio (Zed and other editors)", runAcpCmd},
		{"demo", "", "run a scripted session that shows every card (no API key)", runDemoCmd},
		{"run", `"PROMPT"`, "run one agent turn in the current directory", runRunCmd},
		{"sessions", "", "list recorded sessions", runSessionsCmd},
		{"attach", "[ID | last]", "join a live session of another dsh in this terminal", runAttachCmd},
		{"replay", "SESSION", "print a recorded session's messages and cards", runReplayCmd},
		{"export", "SESSION", "write a session as Markdown, a self-contained HTML page or JSON", runExportCmd},
		{"web", "[--addr 127.0.0.1:0]", "serve a local web view of every session, live", runWebCmd},
		{"tool", "NAME JSON | -", "run tool calls directly and print their cards", runToolCmd},
		{"config", "", "print the effective settings and where each came from", runConfigCmd},
		{"plugin", "SUBCOMMAND", "add, list, remove, enable or disable Claude Code plugins", runPluginCmd},
		{"login", "", "keep a provider's API key for every dsh (an editor's sign-in runs it)", runLoginCmd},
		{"mcp", "list | login NAME", "the MCP servers' state; sign in to one or out", runMCPCmd},
		{"version", "", "print dsh's version", runVersionCmd},
	}
}

const usageHead = `dsh — a coding-agent harness whose every tool call is a card.

Usage:
  dsh [flags]                 open a conversation in the current directory
  dsh -c [flags]              go on with this directory's newest session
  dsh --resume [ID] [flags]   go on with a session (a list to pick from without ID)
  dsh COMMAND [flags] [args]

Commands:
`

func usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %-22s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprint(w, chatFlagsHelp())
	fmt.Fprint(w, "\nRun 'dsh COMMAND --help' for a command's flags.\n")
}

// exitError carries a specific exit status out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return "exit " + strconv.Itoa(e.code) }

// limitError is a run that ended at one of its limits: its message printed,
// its own exit status.
type limitError struct {
	code int
	msg  string
}

func (e limitError) Error() string { return e.msg }

// errUsage marks a mistake in the command line; the message has been printed.
var errUsage = errors.New("usage")

// Main runs dsh with args (without the program name) and returns the exit status.
func Main(args []string, io IO) int {
	switch {
	case len(args) == 0:
		args = []string{"chat"}
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		usage(io.Out)
		return 0
	case args[0] == "--version" || args[0] == "-version":
		args = []string{"version"}
	case strings.HasPrefix(args[0], "-"):
		args = append([]string{"chat"}, args...)
	}
	for _, c := range append(commands(), command{"chat", "", "", runChatCmd}) {
		if c.name != args[0] {
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		go cancelOnInterrupt(io, stop, interruptNote(c.name))
		err := c.run(ctx, io, args[1:])
		if killing.Load() {
			// The second Ctrl-C ended the sessions under the command, which
			// then returned whatever that made of it: the exit is 130, once
			// every process is gone.
			<-killed
			return 130
		}
		var ee exitError
		var le limitError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		case errors.As(err, &ee):
			return ee.code
		case errors.As(err, &le):
			fmt.Fprintf(io.Err, "dsh %s: %v\n", c.name, err)
			return le.code
		default:
			fmt.Fprintf(io.Err, "dsh %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(io.Err, "dsh: unknown command %q", args[0])
	if near := nearest(args[0], commands()); near != "" {
		fmt.Fprintf(io.Err, "; did you mean %q?", near)
	}
	fmt.Fprintln(io.Err, "\nRun 'dsh --help' for the commands.")
	return 2
}

// nearest is the command whose name is at most two edits from name, "" if
// none is.
func nearest(name string, cmds []command) string {
	best, bestD := "", 3
	for _, c := range cmds {
		if d := editDistance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// chatFlagsHelp lists the conversation's flags, from the flag set the chat
// parses, so that the help cannot leave one out.
func chatFlagsHelp() string {
	fs := flag.NewFlagSet("dsh", flag.ContinueOnError)
	var o sessionFlags
	o.register(fs)
	var b strings.Builder
	b.WriteString("\nThe conversation's flags (dsh run takes them too):\n")
	line := func(left, usage string) { fmt.Fprintf(&b, "  %-22s%s\n", left, usage) }
	line("-c, --continue", fs.Lookup("continue").Usage)
	line("--resume [ID]", "go on with session ID; without one, pick from a list")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "c" || f.Name == "continue" {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if arg != "" {
			left += " " + strings.ToUpper(arg)
		}
		line(left, usage)
	})
	return b.String()
}

// newFlags returns a flag set that prints its usage to io.Err.
func newFlags(io IO, name, args, summary string) *flag.FlagSet {
	return newFlagsLazy(io, name, args, func() string { return summary })
}

// newFlagsLazy is newFlags with a summary made only when the help is printed
// (dsh tool's lists the tools, which a run must not pay for building).
func newFlagsLazy(io IO, name, args string, summary func() string) *flag.FlagSet {
	fs := flag.NewFlagSet("dsh "+name, flag.ContinueOnError)
	fs.SetOutput(io.Err)
	fs.Usage = func() {
		// Asked-for help goes to stdout (parse sets it); help after a mistake to stderr.
		w := fs.Output()
		fmt.Fprintf(w, "Usage: dsh %s [flags] %s\n\n%s\n", name, args, summary())
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(w)
		if b.Len() > 0 {
			fmt.Fprintf(w, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}

// parse parses flags, turning mistakes into errUsage (the flag package has
// already printed what was wrong) and --help into flag.ErrHelp.
func parse(io IO, fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(io.Out)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	full := fs.Usage
	fs.Usage = func() { helpHint(fs.Output(), fs) }
	err := fs.Parse(args)
	fs.Usage = full
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// usageErr prints a command-line mistake and where the help is: the mistake
// is what the user needs to read, not the whole help under it.
func usageErr(io IO, fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(io.Err, "%s: %s\n", strings.TrimSpace(fs.Name()), fmt.Sprintf(format, args...))
	helpHint(io.Err, fs)
	return errUsage
}

// helpHint says how to get a command's help.
func helpHint(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Run '%s --help' for its usage and flags.\n", strings.TrimSpace(fs.Name()))
}

// colorMode is the --color flag: auto follows the terminal and NO_COLOR.
type colorMode string

func (c *colorMode) String() string { return string(*c) }
func (c *colorMode) Set(s string) error {
	switch s {
	case "auto", "always", "never":
		*c = colorMode(s)
		return nil
	}
	return fmt.Errorf("want auto, always or never, got %q", s)
}

func (c colorMode) enabled(io IO) bool {
	switch c {
	case "always":
		return true
	case "never":
		return false
	}
	return io.OutIsTerminal && io.Getenv("NO_COLOR") == "" && io.Getenv("TERM") != "dumb"
}

func (io IO) width() int {
	if io.Width > 0 {
		return io.Width
	}
	if n, err := strconv.Atoi(io.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// cancelOnInterrupt cancels the command at the first Ctrl-C (or SIGTERM, SIGHUP):
// it ends its turn and closes its sessions. The second kills every session's
// processes, synchronously, and exits.
func cancelOnInterrupt(io IO, cancel func(), note string) {
	if io.Interrupts == nil {
		return
	}
	<-io.Interrupts
	fmt.Fprintln(io.Err, "\ndsh: "+note+" (press Ctrl-C again to exit now)")
	cancel()
	<-io.Interrupts
	killing.Store(true)
	host.KillAll()
	close(killed)
	os.Exit(130)
}

// interruptNote says what the first Ctrl-C does to command name: the web
// server has no turn to cancel.
func interruptNote(name string) string {
	if name == "web" {
		return "stopping the web server"
	}
	return "cancelling"
}

// killing is set at the second Ctrl-C, and killed closed once that has killed
// every session's processes.
var (
	killing atomic.Bool
	killed  = make(chan struct{})
)

// notifyInterrupts is the real process's channel of the signals that end dsh.
func notifyInterrupts() <-chan os.Signal {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return ch
}
