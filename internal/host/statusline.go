package host

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// Claude Code's statusLine: a command told the session's state as JSON on
// its stdin, whose first line of output is shown as the status line.
const (
	// statusLineEvery is how often it runs at most, as in Claude Code.
	statusLineEvery = 300 * time.Millisecond
	// statusLineWait bounds one run: a status line that hangs shows nothing.
	statusLineWait = 5 * time.Second
	// statusLineMax bounds the line kept: far more than any screen's width.
	statusLineMax = 4 << 10
)

// statusLine runs the session's status line command when its status
// changes, one run at a time and at most every statusLineEvery; the line is
// in Status.Line.
type statusLine struct {
	s       *Session
	command string
	runner  *hooks.Runner
	ctx     context.Context
	stop    context.CancelFunc
	warn    sync.Once

	mu                  sync.Mutex
	line                string
	busy, again, closed bool
	last                time.Time
	done                sync.WaitGroup // the running loop
}

func newStatusLine(s *Session, command, root string) *statusLine {
	r, _ := hooks.New(nil, root, hooks.Env(s.o.KeepEnv)) // no hooks: no matcher to fail
	ctx, stop := context.WithCancel(context.Background())
	return &statusLine{s: s, command: command, runner: r, ctx: ctx, stop: stop}
}

// text is the line last shown; "" before the first run, or after a failure.
func (l *statusLine) text() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.line
}

// poke asks for a run: now, or once the running one and the pause end.
func (l *statusLine) poke() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
	case l.busy:
		l.again = true
	default:
		l.busy = true
		l.done.Add(1)
		go l.loop()
	}
}

func (l *statusLine) loop() {
	defer l.done.Done()
	for {
		l.mu.Lock()
		wait := statusLineEvery - time.Since(l.last)
		l.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
				return
			}
		}
		l.mu.Lock()
		l.again, l.last = false, time.Now()
		l.mu.Unlock()
		line := l.run()
		l.mu.Lock()
		changed := line != l.line
		l.line = line
		again := l.again
		l.busy = again
		l.mu.Unlock()
		if changed {
			l.s.publishStatus()
		}
		if !again || l.ctx.Err() != nil {
			return
		}
	}
}

// run runs the command once and returns its first line.
func (l *statusLine) run() string {
	in, err := json.Marshal(l.s.statusLineInput(), json.Deterministic(true))
	if err != nil {
		return ""
	}
	out, err := l.runner.Command(l.ctx, l.command, in, statusLineWait)
	if err != nil {
		if l.ctx.Err() == nil {
			l.warn.Do(func() { l.s.o.Warn("statusLine (" + l.command + "): " + err.Error()) })
		}
		return ""
	}
	first, _, _ := strings.Cut(out, "\n")
	if len(first) > statusLineMax { // the chat decodes it at every frame
		first = strings.ToValidUTF8(first[:statusLineMax], "")
	}
	return strings.TrimRight(first, "\r")
}

// close stops the runs and waits for the one running, which reads the
// session's transcript, before the session closes it.
func (l *statusLine) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.stop()
	l.done.Wait()
	l.runner.Close()
}

// statusLineInput is what Claude Code tells a status line command, of what
// dsh knows: the session, its model, directories, cost and context.
type statusLineInput struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
	Version     string `json:"version"`
	OutputStyle struct {
		Name string `json:"name"`
	} `json:"output_style"`
	Cost struct {
		TotalCostUSD float64 `json:"total_cost_usd"`
	} `json:"cost"`
	ContextWindow struct {
		TotalInputTokens  int64 `json:"total_input_tokens"`
		TotalOutputTokens int64 `json:"total_output_tokens"`
		ContextWindowSize int64 `json:"context_window_size"`
		// How full the window is, in percent: what most status lines show.
		UsedPercentage      float64 `json:"used_percentage"`
		RemainingPercentage float64 `json:"remaining_percentage"`
	} `json:"context_window"`
	Exceeds200k bool `json:"exceeds_200k_tokens"`
}

func (s *Session) statusLineInput() statusLineInput {
	st := s.Status()
	in := statusLineInput{HookEventName: "Status", SessionID: s.ID(), TranscriptPath: s.transcriptPath(), Cwd: st.Cwd, Version: s.o.Version}
	in.Model.ID, in.Model.DisplayName = st.Model, models.Lookup(st.Model).Name
	in.Workspace.CurrentDir, in.Workspace.ProjectDir = st.Cwd, s.ws.Root()
	in.OutputStyle.Name = "default"
	in.Cost.TotalCostUSD = st.Cost
	in.ContextWindow.TotalInputTokens, in.ContextWindow.TotalOutputTokens, in.ContextWindow.ContextWindowSize = st.InputTokens, st.OutputTokens, st.Window
	if st.Window > 0 {
		used := min(100, float64(st.ContextTokens)*100/float64(st.Window))
		in.ContextWindow.UsedPercentage, in.ContextWindow.RemainingPercentage = used, 100-used
	}
	in.Exceeds200k = st.ContextTokens > 200_000
	return in
}
