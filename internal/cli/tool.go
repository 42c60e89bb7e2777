package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/settings"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/view"
)

type toolOptions struct {
	JSON         bool
	AllowOutside bool
	AddDirs      []string
	Color        colorMode
	Sandbox      string
	Name         string // "-" reads calls from stdin
	Args         string
}

const toolSummary = `Runs tool calls in the current directory (the workspace root) and prints each
call's card and result card. With NAME JSON it runs one call; with - it reads
calls as JSON lines {"name": ..., "args": {...}} from stdin and runs them in
order in one session, so session state (files read, cwd, jobs, todos) carries
from call to call. Exits 1 if any call returned an error result.`

func runToolCmd(ctx context.Context, io IO, args []string) error {
	// SIGTERM and SIGINT cancel ctx already (Main); a hangup ends the session
	// too, so that its background jobs go with it.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	o := toolOptions{Color: "auto"}
	fs := newFlagsLazy(io, "tool", "NAME JSON | -", func() string {
		return toolSummary + "\n\nTools: " + toolNames(toolset.New(toolset.Options{})) + "."
	})
	fs.BoolVar(&o.JSON, "json", false, "print one JSON line per call: {call, result, card}")
	fs.BoolVar(&o.AllowOutside, "allow-outside", false, "let tools touch paths outside the workspace root")
	fs.Func("add-dir", "also work in `DIR`, confined and sandboxed like the workspace (repeatable)", func(d string) error {
		o.AddDirs = append(o.AddDirs, d)
		return nil
	})
	fs.StringVar(&o.Sandbox, "sandbox", "", sandboxUsage)
	fs.Var(&o.Color, "color", "colour output: auto, always or never (auto honours NO_COLOR)")
	if err := parse(io, fs, args); err != nil {
		return err
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && rest[0] == "-":
		o.Name = "-"
	case len(rest) == 2:
		o.Name, o.Args = rest[0], rest[1]
	case len(rest) == 1:
		o.Name, o.Args = rest[0], "{}"
	default:
		return usageErr(io, fs, "want NAME JSON or -")
	}
	return runTool(ctx, io, o)
}

// callLines yields the lines of in until EOF, a read error, or the end of ctx:
// a signal must end `dsh tool -` (and its session's jobs) even while it waits
// for input, so the reading happens on a goroutine of its own, unless the
// file's deadline can end the wait (polledLines).
func callLines(ctx context.Context, in io.Reader) iter.Seq2[[]byte, error] {
	if f, ok := in.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		return polledLines(ctx, f)
	}
	return func(yield func([]byte, error) bool) {
		type line struct {
			b   []byte
			err error
		}
		lines := make(chan line)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(in)
			sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
			send := func(l line) bool {
				select {
				case lines <- l:
					return true
				case <-stop:
					return false
				}
			}
			for sc.Scan() {
				if !send(line{b: bytes.Clone(sc.Bytes())}) {
					return
				}
			}
			if err := sc.Err(); err != nil {
				send(line{err: fmt.Errorf("reading stdin: %w", err)})
			}
		}()
		for {
			select {
			case l, ok := <-lines:
				if !ok || !yield(l.b, l.err) {
					return
				}
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
	}
}

// polledLines is callLines for a file read through the poller (see
// pollable): it reads on the caller's goroutine, a hand-off fewer per call,
// and the end of ctx ends a read that waits through the file's deadline.
func polledLines(ctx context.Context, f *os.File) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
		defer stop()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
		for sc.Scan() {
			if ctx.Err() != nil {
				break
			}
			if !yield(bytes.Clone(sc.Bytes()), nil) {
				return
			}
		}
		switch {
		case ctx.Err() != nil:
			yield(nil, ctx.Err())
		case sc.Err() != nil:
			yield(nil, fmt.Errorf("reading stdin: %w", sc.Err()))
		}
	}
}

// toolCall is one line of `dsh tool -` input.
type toolCall struct {
	Name string         `json:"name"`
	Args jsontext.Value `json:"args"`
}

func runTool(ctx context.Context, io IO, o toolOptions) (err error) {
	// The calls are a session like any other, logged to a scratch directory that
	// goes with the command: session state (files read, cwd, jobs, todos) carries
	// from call to call, and ending the session kills the jobs it started.
	dir, err := os.MkdirTemp("", "dsh-tool-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	st, err := settingsFlags{in: settings.Input{Flags: config.Flags{Sandbox: o.Sandbox}, AllowOutside: o.AllowOutside,
		AddDirs: o.AddDirs, SessionDir: dir, NoModel: true}}.resolve(ctx, io)
	if err != nil {
		return err
	}
	tellIgnored(io, st)
	// The calls are the user's own: no mode asks (a policy against the bypass
	// mode is about the model's calls), no model or MCP server runs.
	ho := st.Options()
	ho.Mode, ho.NoBypass, ho.Provider, ho.Models, ho.MCP, ho.Now, ho.Warn = agent.ModeBypass, "", nil, nil, nil, io.Now, warner(io)
	ho.ScratchLog = true // removed with dir below
	ho.Live = nil        // one call, no one to join it
	s, err := host.Create(ho)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()

	r := &toolRunner{io: io, o: o, s: s, pres: view.NewPresenter(s.Registry()),
		ui: termui.New(io.Out, termui.Options{Color: o.Color.enabled(io), Width: io.width(), Root: s.Root()})}
	r.pres.OnError = func(err error) { warner(io)(err.Error()) }
	sub := s.SubscribeRecords(r.handle)
	defer sub.Close()
	r.sub = sub
	reg := s.Registry()
	if o.Name != "-" {
		if _, ok := reg.Get(o.Name); !ok {
			return fmt.Errorf("unknown tool %q (tools: %s)", o.Name, toolNames(reg))
		}
		if !jsontext.Value(o.Args).IsValid() {
			return fmt.Errorf("arguments for %s are not valid JSON: %s", o.Name, o.Args)
		}
		return r.finish(r.run(ctx, o.Name, []byte(o.Args)))
	}

	failed := false
	n := 0
	for line, err := range callLines(ctx, io.In) {
		n++
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var c toolCall
		if err := json.Unmarshal(line, &c, json.RejectUnknownMembers(true)); err != nil {
			return fmt.Errorf("stdin line %d: want {\"name\": ..., \"args\": {...}}: %w", n, err)
		}
		if c.Name == "" {
			return fmt.Errorf("stdin line %d: missing \"name\"", n)
		}
		if len(c.Args) == 0 {
			c.Args = jsontext.Value("{}")
		}
		isErr, err := r.run(ctx, c.Name, c.Args)
		if err != nil {
			return err
		}
		failed = failed || isErr
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return r.finish(failed, nil)
}

type toolRunner struct {
	io   IO
	o    toolOptions
	s    *host.Session
	sub  *host.Subscription
	pres *view.Presenter
	ui   *termui.Renderer
}

func (r *toolRunner) finish(failed bool, err error) error {
	if err != nil {
		return err
	}
	if failed {
		return exitError{1}
	}
	return nil
}

// handle prints the session's records as they come: the call card, live
// output, the result card — or, with --json, one line per call.
func (r *toolRunner) handle(e host.Event) {
	if e.Kind != host.KindRecord {
		return
	}
	rec := e.Record
	it := r.pres.Present(rec)
	switch {
	case r.o.JSON && rec.Type == session.TypeToolResult && rec.Result != nil:
		_ = writeToolJSON(r.io.Out, it.Call, *rec.Result, it.Result)
	case r.o.JSON:
	case rec.Type == session.TypeToolCall:
		_ = r.ui.Call(it.Call)
	case rec.Type == session.TypeProgress:
		_ = r.ui.Progress(rec.Chunk)
	case rec.Type == session.TypeToolResult && rec.Result != nil:
		_ = r.ui.Result(it.Result, rec.Result.Content, rec.Result.IsError)
	case rec.Type == session.TypePlan:
		_ = r.ui.Plan(rec.Plan)
	}
}

// run executes one call and waits for it to be printed; it reports whether the
// result is an error.
func (r *toolRunner) run(ctx context.Context, name string, args []byte) (bool, error) {
	res, err := r.s.RunTool(ctx, name, args)
	r.sub.Flush(drainTimeout)
	return res.IsError, err
}

// writeToolJSON prints {"call": card, "result": {...}, "card": card|null}.
func writeToolJSON(w io.Writer, call card.Call, res tool.Result, rc card.Result) error {
	line := struct {
		Call   card.Call   `json:"call"`
		Result tool.Result `json:"result"`
		Card   card.Result `json:"card"`
	}{call, res, rc}
	b, err := json.Marshal(line, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func toolNames(reg *tool.Registry) string {
	var names []string
	for _, t := range reg.Tools() {
		names = append(names, t.Name())
	}
	return strings.Join(names, ", ")
}
