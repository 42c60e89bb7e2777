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
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

//go:embed bash.md
var bashDescription string

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
	// Sandbox confines commands (foreground and background) with Landlock; the
	// zero value and sandbox.Off run them unconfined. Check it first with
	// sandbox.Check: a command that cannot be confined does not run.
	Sandbox sandbox.Mode
}

// Tools returns bash, job_output, job_kill and job_list. At most one Options is used.
func Tools(opts ...Options) []tool.Tool {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	b := &bashTool{keep: append([]string(nil), o.KeepEnv...), sandbox: o.Sandbox}
	return []tool.Tool{
		tool.New(tool.Spec[params]{
			Name:          "bash",
			Description:   bashDescription,
			Permission:    tool.PermExecute,
			Kind:          "execute",
			Execute:       b.execute,
			PresentCall:   presentCall,
			PresentResult: presentResult,
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

// meta is what a foreground command's result persists for its card.
type meta struct {
	ExitCode  *int   `json:"exitCode,omitempty"`
	Signal    string `json:"signal,omitempty"`
	TimedOut  bool   `json:"timedOut,omitzero"`
	Cancelled bool   `json:"cancelled,omitzero"`
	// Cwd is where the command ran, relative to the workspace root.
	Cwd string `json:"cwd"`
	// OutputLength is how many bytes at the start of the result text are the
	// command's output; notes for the model follow it.
	OutputLength int `json:"outputLength"`
	// Sandbox is the sandbox mode the command ran in, empty when unconfined.
	Sandbox sandbox.Mode `json:"sandbox,omitempty"`
	// SandboxRefused is the output line that shows the sandbox refused something.
	SandboxRefused string `json:"sandboxRefused,omitempty"`
}

// jobMeta is what starting a background job persists.
type jobMeta struct {
	JobID string `json:"jobId"`
}

type bashTool struct {
	keep    []string
	sandbox sandbox.Mode
}

func (b *bashTool) env() []string { return scrub(os.Environ(), b.keep) }

// policy is the sandbox policy for commands in ws with environment env, nil
// when commands run unconfined.
func (b *bashTool) policy(ws *workspace.Workspace, env []string) *sandbox.Policy {
	return sandbox.NewPolicy(b.sandbox, ws.Root(), func(name string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	})
}

func (b *bashTool) execute(ctx context.Context, env tool.Env, p params) tool.Result {
	if p.RunInBackground {
		return b.background(env, p)
	}
	return b.foreground(ctx, env, p)
}

func (b *bashTool) foreground(ctx context.Context, env tool.Env, p params) tool.Result {
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
	cmdEnv := b.env()
	policy := b.policy(ws, cmdEnv)
	proc, err := spawn(spec{command: p.Command, dir: dir, env: cmdEnv, trackCwd: true, sandbox: policy, out: sink})
	if err != nil {
		if lv != nil {
			lv.close()
		}
		return tool.Errorf("Could not start the command: %v", err)
	}

	var timedOut, cancelled bool
	timer := time.NewTimer(timeout)
	select {
	case <-proc.exited:
	case <-timer.C:
		timedOut = true
		proc.terminate()
	case <-ctx.Done():
		cancelled = true
		proc.terminate()
	}
	timer.Stop()
	<-proc.done
	if lv != nil {
		lv.close()
	}

	st := proc.status()
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
		if r := policy.Refusal(output); r != "" && (st.code == nil || *st.code != 0) {
			m.SandboxRefused = r
			notes = append(notes, "The sandbox refused this: "+r+"\n"+policy.Describe())
		}
	}
	m.OutputLength = len(output)
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
	r.Meta = mustMarshal(m)
	return r
}

func (b *bashTool) background(env tool.Env, p params) tool.Result {
	cmdEnv := b.env()
	j, err := jobs(env.Session).start(p.Command, p.Description, env.Session.Workspace.Cwd(), cmdEnv, b.policy(env.Session.Workspace, cmdEnv))
	if err != nil {
		return tool.Errorf("Could not start the background job: %v", err)
	}
	where := ""
	if rel := env.Session.Workspace.Rel(j.dir); rel != "." {
		where = " in " + rel
	}
	r := tool.Text(fmt.Sprintf("Started background job %s%s.\nRead its output with job_output {\"job_id\": %q}; stop it with job_kill. It is killed when the session ends.",
		j.id, where, j.id))
	r.Meta = mustMarshal(jobMeta{JobID: j.id})
	return r
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// mustMarshal encodes a meta struct, which cannot fail for these plain types.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return b
}
