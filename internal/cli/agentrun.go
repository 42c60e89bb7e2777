package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
)

// agentRun is one prompt driven to the end of its turn with cards on the terminal.
type agentRun struct {
	Root         string
	AllowOutside bool
	SessionDir   string
	Provider     provider.Provider
	Model        string
	Mode         agent.Mode
	Prompt       string
	Color        bool
}

// runAgentTurn creates a session, runs one turn and renders the session's stream
// as it happens. It returns the turn's stop reason and the session's id.
func runAgentTurn(ctx context.Context, io IO, r agentRun) (agent.StopReason, string, error) {
	dir, err := session.Dir(r.SessionDir)
	if err != nil {
		return "", "", err
	}
	s, err := host.Create(host.Options{
		SessionDir: dir, Root: r.Root, AllowOutside: r.AllowOutside, KeepEnv: keepEnv(io),
		Mode: r.Mode, Model: r.Model, Provider: func() (provider.Provider, error) { return r.Provider, nil },
		Ask: true, Now: io.Now, Warn: warner(io),
	})
	if err != nil {
		return "", "", err
	}
	term := newTermConsumer(io.Out, s.Registry(), termui.Options{Color: r.Color, Width: io.width()})
	term.pres.OnError = func(err error) { warner(io)(err.Error()) }
	ask := &termAsker{io: io, lines: stdinLines(io.In)}
	sub := s.Subscribe(func(e host.Event) {
		switch e.Kind {
		case host.KindRecord:
			_ = term.handle(e.Record) // a failing terminal must not stall the turn
		case host.KindPermission:
			ask.ask(e.Permission)
		case host.KindDelta, host.KindModelRequest, host.KindCallStarted, host.KindUsage:
		}
	})
	stop, turnErr := s.Prompt(ctx, r.Prompt)
	sub.Flush(drainTimeout)
	closeErr := s.Close()
	if turnErr != nil {
		return stop, s.ID(), turnErr
	}
	return stop, s.ID(), closeErr
}

// warner prints harness warnings on stderr.
func warner(io IO) func(string) {
	return func(msg string) { fmt.Fprintf(io.Err, "dsh: %s\n", msg) }
}

// stdinLines is the one reader of stdin: answers to every prompt come from it,
// so a prompt that was cancelled leaves no reader behind to eat the next answer.
func stdinLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				ch <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// termAsker answers permission requests on the terminal.
type termAsker struct {
	io    IO
	lines <-chan string
}

func (t *termAsker) ask(p *host.Permission) {
	req := p.Request
	always := ""
	if ap := req.Approval; ap.Remember && len(ap.Keys) > 0 {
		always = fmt.Sprintf(", [a] always allow %s", ap.Label)
	}
	fmt.Fprintf(t.io.Err, "Allow %s? [y] once%s, [n] no: ", req.Tool, always)
	select {
	case <-p.Done():
		fmt.Fprintln(t.io.Err)
	case line, ok := <-t.lines:
		switch a := strings.ToLower(strings.TrimSpace(line)); {
		case !ok:
			fmt.Fprintln(t.io.Err, "(no answer on stdin: rejected; use --mode to decide in advance)")
			p.Answer(agent.Reject)
		case a == "y" || a == "yes":
			p.Answer(agent.AllowOnce)
		case (a == "a" || a == "always") && always != "":
			p.Answer(agent.AllowAlways)
		default:
			p.Answer(agent.Reject)
		}
	}
}

// drainTimeout bounds how long a command waits for its output to catch up.
const drainTimeout = 5 * time.Second
