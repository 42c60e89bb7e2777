package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/secretenv"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/supervisor"
)

// Bounds of one run.
const (
	// readCap is how much of each of a hook's stdout and stderr is read; the
	// rest is drained unread.
	readCap = 1 << 20
	// OutputCap is how much of what a hook printed its record keeps.
	OutputCap = 8 << 10
	// contextCap is how much text one run may add to the model context.
	contextCap = 10_000
	killGrace  = 2 * time.Second
	drainWait  = 100 * time.Millisecond
)

// Runner runs a session's hooks. A nil Runner runs none.
type Runner struct {
	hooks []compiled
	root  string
	env   []string
}

type compiled struct {
	Hook
	m matcher
}

// New returns a runner of hs in the workspace root, with env (already
// scrubbed of credentials) plus CLAUDE_PROJECT_DIR. A hook whose matcher does
// not compile is left out and named in the error; the others run.
func New(hs []Hook, root string, env []string) (*Runner, error) {
	r := &Runner{root: root, env: append(append([]string(nil), env...), "CLAUDE_PROJECT_DIR="+root)}
	var errs []error
	for _, h := range hs {
		m, err := compile(h.Matcher)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s hook %q (%s): %w", h.Event, h.Command, h.Source, err))
			continue
		}
		r.hooks = append(r.hooks, compiled{Hook: h, m: m})
	}
	return r, errors.Join(errs...)
}

// Input is what a hook is told about its event; the stdin JSON is made of it.
type Input struct {
	Event Event
	// The common fields.
	SessionID, TranscriptPath, Cwd string
	PermissionMode                 string // dsh's mode; told as PermissionMode names it
	// The tool events: the call as Claude Code would name it (Tool, Input) and
	// as dsh does (DshTool, matched too); Response is the result (PostToolUse).
	Tool, DshTool string
	ToolInput     jsontext.Value
	Response      jsontext.Value
	CallID        string
	// UserPromptSubmit.
	Prompt string
	// Stop: the turn already goes on because a Stop hook blocked it.
	StopHookActive bool
	// SessionStart: startup or resume (matched).
	Source string
	// Notification: what the user is asked and its type (matched).
	Message, NotificationType string
}

// stdin is a hook's input as Claude Code writes it.
type stdin struct {
	SessionID        string         `json:"session_id"`
	TranscriptPath   string         `json:"transcript_path"`
	Cwd              string         `json:"cwd"`
	PermissionMode   string         `json:"permission_mode,omitempty"`
	HookEventName    Event          `json:"hook_event_name"`
	ToolName         string         `json:"tool_name,omitempty"`
	ToolInput        jsontext.Value `json:"tool_input,omitzero"`
	ToolResponse     jsontext.Value `json:"tool_response,omitzero"`
	ToolUseID        string         `json:"tool_use_id,omitempty"`
	Prompt           *string        `json:"prompt,omitempty"`
	StopHookActive   *bool          `json:"stop_hook_active,omitempty"`
	Source           string         `json:"source,omitempty"`
	Message          string         `json:"message,omitempty"`
	NotificationType string         `json:"notification_type,omitempty"`
}

func (in Input) json() ([]byte, error) {
	s := stdin{SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		PermissionMode: PermissionMode(in.PermissionMode), HookEventName: in.Event}
	switch in.Event {
	case PreToolUse, PostToolUse:
		s.ToolName, s.ToolInput, s.ToolUseID = in.Tool, in.ToolInput, in.CallID
		if s.ToolName == "" {
			s.ToolName = in.DshTool
		}
		if len(s.ToolInput) == 0 {
			s.ToolInput = jsontext.Value("{}")
		}
		if in.Event == PostToolUse {
			s.ToolResponse = in.Response
		}
	case UserPromptSubmit:
		s.Prompt = &in.Prompt
	case Stop:
		s.StopHookActive = &in.StopHookActive
	case SessionStart:
		s.Source = in.Source
	case Notification:
		s.Message, s.NotificationType = in.Message, in.NotificationType
	}
	return json.Marshal(s)
}

// selected are the hooks that run for in.
func (r *Runner) selected(in Input) []compiled {
	if r == nil {
		return nil
	}
	var out []compiled
	for _, h := range r.hooks {
		if h.Event != in.Event {
			continue
		}
		var ok bool
		switch in.Event {
		case PreToolUse, PostToolUse:
			tool := in.Tool
			if tool == "" {
				tool = in.DshTool
			}
			ok = h.m.match(tool, in.DshTool)
		case SessionStart:
			ok = h.m.match(in.Source)
		case Notification:
			ok = h.m.match(in.NotificationType)
		case UserPromptSubmit, Stop:
			ok = true // Claude Code has no matcher for them
		}
		if ok {
			out = append(out, h)
		}
	}
	return out
}

// Has reports whether any hook runs for event: callers skip building the
// input when none does.
func (r *Runner) Has(e Event) bool {
	if r == nil {
		return false
	}
	for _, h := range r.hooks {
		if h.Event == e {
			return true
		}
	}
	return false
}

// Outcome is what the hooks of one event decided together.
type Outcome struct {
	// Runs are the hooks that ran, one record each, in configuration order.
	Runs []session.Hook
	// Decision is the strongest of theirs: deny over ask over allow
	// (PreToolUse); block; "" when none decided.
	Decision string
	// Reason joins the reasons of the runs that made the decision.
	Reason string
	// Stop says a hook asked for the turn to end (continue: false), with
	// StopReason its reason for the user.
	Stop       bool
	StopReason string
}

// Run runs every hook selected for in, one after another, and returns their
// records and their joint decision. ctx ends the runs (the turn's cancel).
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	hs := r.selected(in)
	if len(hs) == 0 {
		return Outcome{}
	}
	stdinJSON, err := in.json()
	var o Outcome
	for _, h := range hs {
		rec := session.Hook{Event: string(in.Event), Matcher: h.Matcher, Command: h.Command, Tool: in.Tool, Call: in.CallID}
		if rec.Tool == "" {
			rec.Tool = in.DshTool
		}
		if err != nil {
			rec.ExitCode, rec.Error = -1, "encoding its input: "+err.Error()
		} else {
			res := r.exec(ctx, h, stdinJSON)
			rec = interpret(rec, res)
		}
		o.Runs = append(o.Runs, rec)
	}
	o.decide()
	if o.Decision == "block" && in.Event == UserPromptSubmit {
		// The prompt is not sent: neither is what hooks would have added to it.
		for i := range o.Runs {
			o.Runs[i].Context = ""
		}
	}
	return o
}

// decide folds the runs' decisions into the outcome's.
func (o *Outcome) decide() {
	rank := map[string]int{"allow": 1, "ask": 2, "block": 3, "deny": 3}
	var reasons []string
	for _, h := range o.Runs {
		switch {
		case h.Decision == "stop":
			o.Stop = true
			if h.Reason != "" {
				o.StopReason = strings.TrimSpace(o.StopReason + "\n" + h.Reason)
			}
			continue
		case rank[h.Decision] == 0:
			continue
		case rank[h.Decision] > rank[o.Decision]:
			o.Decision, reasons = h.Decision, nil
		case rank[h.Decision] < rank[o.Decision]:
			continue
		}
		if h.Reason != "" {
			reasons = append(reasons, h.Reason)
		}
	}
	o.Reason = strings.Join(reasons, "\n")
}

// result is how one command ended.
type result struct {
	code           int // -1: it did not run or finish
	stdout, stderr string
	err            string // why it did not run or finish
}

// exec runs one hook with stdinJSON on its stdin.
func (r *Runner) exec(ctx context.Context, h compiled, stdinJSON []byte) result {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	pipe := func() (*os.File, *os.File, error) {
		rd, wr, err := os.Pipe()
		if err == nil {
			files = append(files, rd, wr)
		}
		return rd, wr, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		return result{code: -1, err: "pipes: " + err.Error()}
	}
	sh := "/bin/sh"
	if p, err := exec.LookPath("bash"); err == nil {
		sh = p
	}
	p, err := supervisor.Start(supervisor.Spec{Path: sh, Args: []string{sh, "-c", h.Command}, Dir: r.root, Env: slices.Concat(r.env, h.Env),
		Input: inR, Output: outW, Errors: errW, Grace: killGrace, Drain: drainWait})
	// The command holds its ends now; ours would keep its pipes open.
	for _, f := range []*os.File{inR, outW, errW} {
		_ = f.Close()
	}
	if err != nil {
		return result{code: -1, err: "could not start: " + err.Error()}
	}
	var wg sync.WaitGroup
	var stdout, stderr string
	wg.Go(func() {
		_, _ = inW.Write(stdinJSON) // a hook that does not read its input gets EPIPE here, not an error
		_ = inW.Close()
	})
	wg.Go(func() { stdout = readCapped(outR) })
	wg.Go(func() { stderr = readCapped(errR) })
	exited := make(chan supervisor.Exit, 1)
	go func() { exited <- p.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var why string
	var e supervisor.Exit
	select {
	case e = <-exited:
	case <-timer.C:
		why = fmt.Sprintf("timed out after %s", timeout)
	case <-ctx.Done():
		why = "cancelled"
	}
	if why != "" {
		p.Terminate()
		select {
		case e = <-exited:
		case <-time.After(killGrace + time.Second):
			p.Kill()
			e = <-exited
		}
	}
	wg.Wait()
	res := result{code: e.Status.ExitStatus(), stdout: stdout, stderr: stderr, err: why}
	if why != "" {
		res.code = -1
	}
	return res
}

// readCapped reads up to readCap bytes of rd, then drains the rest, so a hook
// that prints without end neither blocks nor fills dsh's memory.
func readCapped(rd io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(rd, readCap))
	_, _ = io.Copy(io.Discard, rd)
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// Env is dsh's environment without the credentials (secretenv.Secret), except
// those named in keep: what the bash tool's commands get.
func Env(keep []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if secretenv.Secret(name, value) && !slices.Contains(keep, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
