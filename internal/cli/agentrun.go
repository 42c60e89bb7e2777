package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
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

// runAgentTurn creates a session, runs one turn and renders its records as they
// are appended. It returns the turn's stop reason and the session's id.
func runAgentTurn(ctx context.Context, io IO, r agentRun) (agent.StopReason, string, error) {
	ws, err := workspace.New(r.Root, r.AllowOutside)
	if err != nil {
		return "", "", err
	}
	dir, err := session.Dir(r.SessionDir)
	if err != nil {
		return "", "", err
	}
	id := session.NewID(io.Now())
	log, err := session.Create(dir, id, ws.Root(), session.Options{Now: io.Now})
	if err != nil {
		return "", "", err
	}
	reg := toolset.New(toolset.Options{KeepEnv: keepEnv(io)})
	tools := tool.NewSession(id, ws)

	shown := newShownCalls()
	term := newTermConsumer(io.Out, reg, termui.Options{Color: r.Color, Width: io.width()})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The consumer subscribes like any other UI would; it ends when the log closes.
		_ = log.Subscribe(context.Background(), func(rec session.Record) error {
			// A failing terminal must not stall the turn: keep consuming.
			_ = term.handle(rec)
			if rec.Type == session.TypeToolCall {
				shown.mark(rec.CallID)
			}
			return nil
		})
	}()

	system, err := agent.SessionPrompt(ws.Root(), reg, io.Now())
	if err != nil {
		fmt.Fprintf(io.Err, "dsh: ignoring project instructions: %v\n", err)
	}
	a := agent.New(agent.Config{
		Provider: r.Provider, Registry: reg, Log: log, Tools: tools, Model: r.Model, Mode: r.Mode,
		Permit: (&termPermitter{io: io, in: bufio.NewReader(io.In), shown: shown}).ask,
		System: system,
	})
	stop, turnErr := a.Prompt(ctx, r.Prompt)
	closeErr := errors.Join(tools.Close(), log.Close())
	wg.Wait()
	if turnErr != nil {
		return stop, id, turnErr
	}
	return stop, id, closeErr
}

// shownCalls lets the permission prompt wait until the call's card is on screen.
type shownCalls struct {
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]bool
}

func newShownCalls() *shownCalls {
	s := &shownCalls{ids: map[string]bool{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *shownCalls) mark(id string) {
	s.mu.Lock()
	s.ids[id] = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

func (s *shownCalls) wait(id string) {
	s.mu.Lock()
	for !s.ids[id] {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// termPermitter asks on the terminal.
type termPermitter struct {
	io    IO
	in    *bufio.Reader
	shown *shownCalls
	mu    sync.Mutex
}

func (p *termPermitter) ask(ctx context.Context, req agent.PermissionRequest) (agent.Decision, error) {
	p.shown.wait(req.CallID)
	p.mu.Lock()
	defer p.mu.Unlock()
	answers := make(chan string, 1)
	go func() {
		fmt.Fprintf(p.io.Err, "Allow %s? [y] once, [a] always, [n] no: ", req.Tool)
		line, err := p.in.ReadString('\n')
		if err != nil && line == "" {
			answers <- ""
			return
		}
		answers <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case <-ctx.Done():
		return agent.Reject, ctx.Err()
	case a := <-answers:
		switch a {
		case "y", "yes":
			return agent.AllowOnce, nil
		case "a", "always":
			return agent.AllowAlways, nil
		case "":
			fmt.Fprintln(p.io.Err, "(no answer on stdin: rejected; use --mode to decide in advance)")
			return agent.Reject, nil
		default:
			return agent.Reject, nil
		}
	}
}
