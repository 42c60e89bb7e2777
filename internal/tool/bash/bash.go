// Package bash runs shell commands for the model: in the foreground with live,
// bounded output and a terminal card, or as background jobs owned by the session.
// Every command runs under a supervisor (internal/supervisor), in its own process
// group: when the command ends, times out or is cancelled, everything it started
// is killed, in the group or not, and so it is if dsh dies, so no process
// outlives the call that made it (background jobs outlive it until they are
// killed or the session ends). Options.Sandbox confines commands with Landlock.
package bash

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/shellrule"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

var (
	//go:embed bash.md
	bashDescription string
	//go:embed guidance.md
	bashGuidance string
)

const (
	defaultTimeout = 120 * time.Second
	maxTimeoutMS   = 600_000
	// The model gets the head and tail of a long output, about 30 000 characters.
	outputHead = 10_000
	outputTail = 20_000
)

// Options configures the tools.
type Options struct {
	// KeepEnv names secret-looking environment variables that commands still get.
	KeepEnv []string
	// SafeCommands are the user's additions to the commands that run without
	// asking (shellrule's safe table), e.g. "make test".
	SafeCommands []string
	// Sandbox confines commands (foreground and background) with Landlock; the
	// zero value and sandbox.Off run them unconfined. Check it first with
	// sandbox.Check: a command that cannot be confined does not run.
	Sandbox sandbox.Mode
	// Network, if set and its rules restrict anything, is the only way
	// sandboxed commands reach the network (sandbox.Policy.Filter).
	Network *netproxy.Proxy
}

// Tools returns bash, job_output, job_kill and job_list. At most one Options is used.
func Tools(opts ...Options) []tool.Tool {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	b := &bashTool{keep: append([]string(nil), o.KeepEnv...), safe: append([]string(nil), o.SafeCommands...), sandbox: o.Sandbox, network: o.Network}
	return []tool.Tool{
		tool.New(tool.Spec[params, meta]{
			Name:          "bash",
			Description:   bashDescription,
			Guidance:      bashGuidance,
			Permission:    tool.PermExecute,
			Kind:          card.ToolExecute,
			Approval:      b.approval,
			Execute:       b.execute,
			PresentCall:   presentCall,
			PresentResult: presentResult,
			Fold:          foldJob,
			Hook:          hookCall,
			Unhook:        unhook,
			HookResponse:  hookResult,
		}),
		jobOutputTool(),
		jobKillTool(),
		jobListTool(),
	}
}

type params struct {
	Command         string `json:"command" jsonschema:"minLength=1" jsonschema_description:"The command to run with bash -c."`
	Description     string `json:"description,omitempty" jsonschema_description:"What the command does, in 5-10 words, shown to the user."`
	TimeoutMS       int    `json:"timeout_ms,omitempty" jsonschema:"minimum=1,maximum=600000" jsonschema_description:"Timeout in milliseconds (default 120000, at most 600000)."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema_description:"Start the command as a background job and return its job id at once."`
}

// meta is what a command's result persists for its card: a foreground command's
// status, or a background job's id.
type meta struct {
	JobID     string `json:"jobId,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	Signal    string `json:"signal,omitempty"`
	TimedOut  bool   `json:"timedOut,omitzero"`
	Cancelled bool   `json:"cancelled,omitzero"`
	// Cwd is where the command ran, relative to the workspace root.
	Cwd string `json:"cwd"`
	// OutputLength is how many bytes at the start of the result text are the
	// command's output; notes for the model follow it.
	OutputLength *int `json:"outputLength,omitempty"`
	// Sandbox is the sandbox mode the command ran in, empty when unconfined.
	Sandbox sandbox.Mode `json:"sandbox,omitempty"`
	// SandboxRefused is the output line that shows the sandbox refused
	// something, or the hosts the network rules refused.
	SandboxRefused string `json:"sandboxRefused,omitempty"`
	// OutputLines is how many lines the command wrote, when only its start and
	// end are kept: what a reader is told is hidden.
	OutputLines int64 `json:"outputLines,omitzero"`
}

// Validate accepts a job's id alone, or a foreground command's exit code or
// signal (exactly one) with an output length that fits.
func (m *meta) Validate() error {
	if m.JobID != "" {
		if m.ExitCode != nil || m.Signal != "" || m.OutputLength != nil {
			return errors.New("a job's meta holds only its id")
		}
		return nil
	}
	if (m.ExitCode == nil) == (m.Signal == "") {
		return errors.New("want an exit code or a signal")
	}
	if m.OutputLength == nil || *m.OutputLength < 0 {
		return errors.New("want a non-negative output length")
	}
	return nil
}

type bashTool struct {
	keep    []string
	safe    []string
	sandbox sandbox.Mode
	network *netproxy.Proxy

	envMu             sync.Mutex
	environ, scrubbed []string // the last environment scrubbed, and the result

	classMu    sync.Mutex
	classified struct {
		cmd string
		v   shellrule.Verdict
		ok  bool
	}
}

// env is dsh's environment without its secrets. It is scrubbed again only
// when the environment changed since the last command: matching every secret
// pattern against every variable costs more than comparing them.
func (b *bashTool) env() []string {
	environ := os.Environ()
	b.envMu.Lock()
	defer b.envMu.Unlock()
	if !slices.Equal(environ, b.environ) {
		b.environ, b.scrubbed = environ, scrub(environ, b.keep)
	}
	return slices.Clip(b.scrubbed)
}

// commandEnv is the environment of command, run in dir: a known-safe one,
// which nobody was asked about, runs guarded (guard.go).
func (b *bashTool) commandEnv(command, dir string) []string {
	if v := b.classify(command); v.Safe {
		return guardEnv(dir, b.env(), v.RunsGit)
	}
	return b.env()
}

// policy is the sandbox policy for commands in ws with environment env, nil
// when commands run unconfined.
func (b *bashTool) policy(ws *workspace.Workspace, env []string) *sandbox.Policy {
	getenv := func(name string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
	p := sandbox.NewPolicy(b.sandbox, ws.Root(), getenv)
	// An additional root is writable as the root is, its own protected paths
	// kept read-only.
	for _, r := range ws.Roots()[1:] {
		if x := sandbox.NewPolicy(b.sandbox, r, getenv); p != nil && x != nil {
			p.Write = append(p.Write, r)
			p.Protect = append(p.Protect, x.Protect...)
		}
	}
	p.Filter(b.network)
	return p
}

func (b *bashTool) execute(ctx context.Context, env tool.Env, p params, _ *meta) (tool.Result, *meta, error) {
	if p.RunInBackground {
		r, m := b.background(env, p)
		return r, m, nil
	}
	r, m := b.foreground(ctx, env, p)
	return r, m, nil
}

func (b *bashTool) foreground(ctx context.Context, env tool.Env, p params) (tool.Result, *meta) {
	ws := env.Session.Workspace
	dir := ws.Cwd()
	timeout := defaultTimeout
	if p.TimeoutMS > 0 {
		timeout = time.Duration(p.TimeoutMS) * time.Millisecond // the schema caps it at maxTimeoutMS
	}

	out := newHeadTail(outputHead, outputTail)
	var sink writerFunc = out.Write
	var lv *live
	if env.Progress != nil {
		lv = startLive(env.Emit)
		sink = func(b []byte) (int, error) {
			_, _ = lv.Write(b)
			return out.Write(b)
		}
	}
	cmdEnv := b.commandEnv(p.Command, dir)
	policy := b.policy(ws, cmdEnv)

	// The output is read here; a timeout or a cancel terminates the command
	// from a timer's goroutine, and the reading then ends. The timer is armed
	// before the command starts: a timer armed while dsh waits for the start
	// wakes a thread of the runtime to watch it.
	var (
		timeoutFired, cancelFired atomic.Bool
		proc                      *process
		spawned                   = make(chan struct{}) // proc is set, nil if the command did not start
	)
	timer := time.AfterFunc(timeout, func() {
		if <-spawned; proc != nil {
			timeoutFired.Store(true)
			proc.terminate()
		}
	})
	proc, untrack, err := jobs(env.Session).spawnForeground(spec{command: p.Command, dir: dir, env: cmdEnv, trackCwd: true, sandbox: policy, out: sink})
	close(spawned)
	if err != nil {
		timer.Stop()
		if lv != nil {
			lv.close()
		}
		return tool.Errorf("Could not start the command: %v", err), nil
	}
	stopCancel := context.AfterFunc(ctx, func() {
		if !timeoutFired.Load() {
			cancelFired.Store(true)
		}
		proc.terminate()
	})
	proc.wait()
	fired := !timer.Stop()
	if !stopCancel() {
		fired = true
	}
	if fired {
		proc.terminate() // returns once the one that fired has
	}
	untrack()
	if lv != nil {
		lv.close()
	}

	st := proc.status()
	timedOut, cancelled := timeoutFired.Load(), cancelFired.Load()
	m := meta{ExitCode: st.code, Signal: st.signal, TimedOut: timedOut, Cancelled: cancelled, Cwd: ws.Rel(dir)}
	var notes []string
	switch {
	case timedOut:
		notes = append(notes, fmt.Sprintf("Timed out after %s: the command's process group was terminated. Raise timeout_ms (at most %d) or use run_in_background for long commands.", timeout, maxTimeoutMS))
	case cancelled:
		notes = append(notes, "Cancelled: the command's process group was terminated.")
	case st.code == nil:
		notes = append(notes, "Killed by "+st.signal+".")
	case *st.code != 0:
		notes = append(notes, fmt.Sprintf("Exit code %d.", *st.code))
	}
	if proc.exit.Leftovers && !timedOut && !cancelled {
		notes = append(notes, "Processes the command left running were killed when it exited; use run_in_background for anything that should keep running.")
	}
	if proc.cwd != "" && proc.cwd != dir {
		switch err := ws.SetCwd(proc.cwd); {
		case errors.Is(err, workspace.ErrOutside):
			notes = append(notes, fmt.Sprintf("The working directory stays %s: the command ended in %s, outside the workspace.", dir, proc.cwd))
		case err != nil:
			notes = append(notes, fmt.Sprintf("The working directory stays %s: %v.", dir, err))
		}
	}

	output := out.String()
	if policy != nil {
		m.Sandbox = b.sandbox
		if hosts := proc.exit.Refused; len(hosts) > 0 {
			m.SandboxRefused = "network: " + strings.Join(hosts, ", ") + " not allowed by network.allowed_domains / denied_domains"
			notes = append(notes, "The sandbox refused connections to "+strings.Join(hosts, ", ")+".\n"+policy.Describe())
		} else if r := policy.Refusal(output); r != "" && (st.code == nil || *st.code != 0) {
			m.SandboxRefused = r
			notes = append(notes, "The sandbox refused this: "+r+"\n"+policy.Describe())
		}
	}
	m.OutputLength = new(len(output))
	if out.omitted() > 0 {
		m.OutputLines = out.totalLines()
	}
	text := output
	if text == "" {
		text = "(no output)"
	}
	if len(notes) > 0 {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += strings.Join(notes, "\n")
	}
	r := tool.Text(text)
	r.IsError = timedOut || cancelled || st.code == nil || *st.code != 0
	return r, &m
}

func (b *bashTool) background(env tool.Env, p params) (tool.Result, *meta) {
	cmdEnv := b.commandEnv(p.Command, env.Session.Workspace.Cwd())
	j, err := jobs(env.Session).start(p.Command, p.Description, env.Session.Workspace.Cwd(), cmdEnv, b.policy(env.Session.Workspace, cmdEnv))
	if err != nil {
		return tool.Errorf("Could not start the background job: %v", err), nil
	}
	where := ""
	if rel := env.Session.Workspace.Rel(j.dir); rel != "." {
		where = " in " + rel
	}
	r := tool.Text(fmt.Sprintf("Started background job %s%s.\nRead its output with job_output {\"job_id\": %q}; stop it with job_kill. It is killed when the session ends.",
		j.id, where, j.id))
	return r, &meta{JobID: j.id}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// foldJob keeps the session's job numbering past every job the log has started,
// so a reloaded session never hands out an id its conversation already used.
func foldJob(s *tool.Session, _ params, _ tool.Result, m *meta) {
	if m == nil || m.JobID == "" {
		return
	}
	var n int
	if _, err := fmt.Sscanf(m.JobID, "job-%d", &n); err == nil {
		jobs(s).atLeast(n)
	}
}
