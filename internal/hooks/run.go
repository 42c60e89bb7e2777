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
	// sup is the supervisor the runs share, one at a time (a run while
	// another is running gets its own): a hook then costs its own fork and
	// exec, not a Go process's start.
	sup supervisor.Session

	shOnce sync.Once
	sh     string
}

// Close ends the runner's supervisor; hooks that run later get their own.
func (r *Runner) Close() {
	if r != nil {
		r.sup.Close()
	}
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
	// as dsh does (DshTool, matched too); Response is the result (PostToolUse),
	// Error and Interrupted how it failed (PostToolUseFailure).
	Tool, DshTool string
	ToolInput     jsontext.Value
	Response      jsontext.Value
	CallID        string
	Error         string
	Interrupted   bool
	// UserPromptSubmit.
	Prompt string
	// Stop, SubagentStop: the turn already goes on because a Stop hook blocked it.
	StopHookActive bool
	// SessionStart: startup, resume or compact (matched); SessionEnd: the
	// reason (matched); PreCompact: manual or auto (matched), with the
	// user's instructions.
	Source, Reason, Trigger, CustomInstructions string
	// SubagentStart, SubagentStop: the task's session, its agent (matched),
	// and (SubagentStop) its transcript.
	AgentID, AgentType, AgentTranscriptPath string
	// Notification: what the user is asked and its type (matched).
	Message, NotificationType string
}

// stdin is a hook's input as Claude Code writes it.
type stdin struct {
	SessionID           string         `json:"session_id"`
	TranscriptPath      string         `json:"transcript_path"`
	Cwd                 string         `json:"cwd"`
	PermissionMode      string         `json:"permission_mode,omitempty"`
	HookEventName       Event          `json:"hook_event_name"`
	ToolName            string         `json:"tool_name,omitempty"`
	ToolInput           jsontext.Value `json:"tool_input,omitzero"`
	ToolResponse        jsontext.Value `json:"tool_response,omitzero"`
	ToolUseID           string         `json:"tool_use_id,omitempty"`
	Error               *string        `json:"error,omitzero"`
	IsInterrupt         *bool          `json:"is_interrupt,omitempty"`
	Prompt              *string        `json:"prompt,omitzero"`
	StopHookActive      *bool          `json:"stop_hook_active,omitempty"`
	AgentID             string         `json:"agent_id,omitempty"`
	AgentType           *string        `json:"agent_type,omitzero"`
	AgentTranscriptPath string         `json:"agent_transcript_path,omitempty"`
	Trigger             string         `json:"trigger,omitempty"`
	CustomInstructions  *string        `json:"custom_instructions,omitzero"`
	Source              string         `json:"source,omitempty"`
	Reason              string         `json:"reason,omitempty"`
	Message             string         `json:"message,omitempty"`
	NotificationType    string         `json:"notification_type,omitempty"`
}

// toolEvent says e is about one tool call.
func toolEvent(e Event) bool {
	return e == PreToolUse || e == PermissionRequest || e == PostToolUse || e == PostToolUseFailure
}

func (in Input) json() ([]byte, error) {
	s := stdin{SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, Cwd: in.Cwd,
		PermissionMode: PermissionMode(in.PermissionMode), HookEventName: in.Event}
	if toolEvent(in.Event) {
		s.ToolName, s.ToolInput = in.Tool, in.ToolInput
		if in.Event != PermissionRequest {
			s.ToolUseID = in.CallID
		}
		if s.ToolName == "" {
			s.ToolName = in.DshTool
		}
		if len(s.ToolInput) == 0 {
			s.ToolInput = jsontext.Value("{}")
		}
	}
	switch in.Event {
	case PostToolUse:
		s.ToolResponse = in.Response
		if len(s.ToolResponse) == 0 {
			s.ToolResponse = jsontext.Value("{}")
		}
	case PostToolUseFailure:
		s.Error, s.IsInterrupt = &in.Error, &in.Interrupted
	case UserPromptSubmit:
		s.Prompt = &in.Prompt
	case Stop:
		s.StopHookActive = &in.StopHookActive
	case SubagentStart:
		s.AgentID, s.AgentType = in.AgentID, &in.AgentType
	case SubagentStop:
		s.StopHookActive = &in.StopHookActive
		s.AgentID, s.AgentType, s.AgentTranscriptPath = in.AgentID, &in.AgentType, in.AgentTranscriptPath
	case PreCompact:
		s.Trigger, s.CustomInstructions = in.Trigger, &in.CustomInstructions
	case SessionStart:
		s.Source = in.Source
	case SessionEnd:
		s.Reason = in.Reason
	case Notification:
		s.Message, s.NotificationType = in.Message, in.NotificationType
	case PreToolUse, PermissionRequest:
	}
	return json.Marshal(s)
}

// matched is what a hook's matcher is matched against for in.
func (in Input) matched() []string {
	switch in.Event {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
		tool := in.Tool
		if tool == "" {
			tool = in.DshTool
		}
		return []string{tool, in.DshTool}
	case SessionStart:
		return []string{in.Source}
	case SessionEnd:
		return []string{in.Reason}
	case PreCompact:
		return []string{in.Trigger}
	case SubagentStart, SubagentStop:
		return []string{in.AgentType}
	case Notification:
		return []string{in.NotificationType}
	case UserPromptSubmit, Stop:
	}
	return nil // Claude Code has no matcher for them: every hook runs
}

// selected are the hooks that run for in.
func (r *Runner) selected(in Input) []compiled {
	if r == nil {
		return nil
	}
	names := in.matched()
	var out []compiled
	for _, h := range r.hooks {
		if h.Event == in.Event && (names == nil || h.m.match(names...)) {
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
	// (PreToolUse, PermissionRequest); block; "" when none decided.
	Decision string
	// Reason joins the reasons of the runs that made the decision.
	Reason string
	// UpdatedInput is the tool input (Claude Code's shape) the last hook
	// that allowed, or decided nothing, asked to run instead (PreToolUse,
	// PermissionRequest); nil: the call's own.
	UpdatedInput jsontext.Value
	// Stop says a hook asked for the turn to end (continue: false), with
	// StopReason its reason for the user.
	Stop       bool
	StopReason string
}

// Ask asks the session's model one question and returns its answer: how
// prompt hooks run.
type Ask func(ctx context.Context, prompt string) (string, error)

// Run runs every hook selected for in, one after another, and returns their
// records and their joint decision. ctx ends the runs (the turn's cancel);
// ask runs the prompt hooks (nil: they fail, deciding nothing).
func (r *Runner) Run(ctx context.Context, in Input, ask Ask) Outcome {
	hs := r.selected(in)
	if len(hs) == 0 {
		return Outcome{}
	}
	stdinJSON, err := in.json()
	var o Outcome
	for _, h := range hs {
		rec := session.Hook{Event: string(in.Event), Matcher: h.Matcher, Command: h.what(), Tool: in.Tool, Call: in.CallID}
		if rec.Tool == "" {
			rec.Tool = in.DshTool
		}
		if err != nil {
			rec.ExitCode, rec.Error = -1, "encoding its input: "+err.Error()
			o.Runs = append(o.Runs, rec)
			continue
		}
		var res result
		switch h.Type {
		case "prompt":
			res = r.prompt(ctx, h, stdinJSON, ask)
		case "http":
			res = r.post(ctx, h, stdinJSON)
		default:
			res = r.exec(ctx, h, stdinJSON)
		}
		var updated jsontext.Value
		rec, updated = interpret(rec, res)
		if updated != nil {
			o.UpdatedInput = updated
		}
		o.Runs = append(o.Runs, rec)
	}
	o.decide()
	if o.Decision == "deny" || o.Decision == "block" {
		o.UpdatedInput = nil
	}
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

// pipeHolds is what a pipe takes without a reader (Linux's smallest pipe
// buffer is a page).
const pipeHolds = 4096

// shell is the shell hooks run with: bash, else sh; looked up once.
func (r *Runner) shell() string {
	r.shOnce.Do(func() {
		r.sh = "/bin/sh"
		if p, err := exec.LookPath("bash"); err == nil {
			r.sh = p
		}
	})
	return r.sh
}

// timeout is how long h may run.
func (h Hook) timeout() time.Duration {
	switch {
	case h.Timeout > 0:
		return h.Timeout
	case h.Type == "prompt":
		return PromptTimeout
	}
	return DefaultTimeout
}

// exec runs one command hook with stdinJSON on its stdin.
func (r *Runner) exec(ctx context.Context, h compiled, stdinJSON []byte) result {
	timeout := h.timeout()
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
	sh := r.shell()
	env := r.env
	if len(h.Env) > 0 {
		env = append(slices.Clip(r.env), h.Env...)
	}
	p, err := r.sup.Start(supervisor.Spec{Path: sh, Args: []string{sh, "-c", h.Command}, Dir: r.root, Env: env,
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
	feed := func() {
		_, _ = inW.Write(stdinJSON) // a hook that does not read its input gets EPIPE here, not an error
		_ = inW.Close()
	}
	if len(stdinJSON) <= pipeHolds {
		feed() // the pipe takes it all at once: no goroutine to hand it over
	} else {
		wg.Go(feed)
	}
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

// Command runs command as a command hook runs, under the runner's supervisor
// in its root with its environment, stdin on its stdin, for at most
// timeout, and returns what it printed; one that fails or does not finish is
// an error with its last line of stderr. Claude Code's statusLine runs so.
func (r *Runner) Command(ctx context.Context, command string, stdin []byte, timeout time.Duration) (string, error) {
	res := r.exec(ctx, compiled{Hook: Hook{Type: "command", Command: command, Timeout: timeout}}, stdin)
	if res.err == "" && res.code == 0 {
		return res.stdout, nil
	}
	why := res.err
	if why == "" {
		why = fmt.Sprintf("exit status %d", res.code)
	}
	if lines := strings.Split(strings.TrimSpace(res.stderr), "\n"); lines[len(lines)-1] != "" {
		why += ": " + strings.TrimSpace(lines[len(lines)-1])
	}
	return res.stdout, errors.New(why)
}
