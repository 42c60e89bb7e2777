package bash

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/supervisor"
	"github.com/dsh-dev/dsh/internal/tool"
)

const (
	// jobBuffer is how much of a background job's output is kept; older output is
	// dropped (and counted) so that a job printing forever does not grow memory.
	jobBuffer = 1 << 20
	// A job_output answer keeps the head and tail of the new output, like bash.
	jobOutputHead = 10_000
	jobOutputTail = 20_000
)

// job is a background command owned by one session.
type job struct {
	id          string
	command     string
	description string
	dir         string
	started     time.Time
	proc        *process

	mu     sync.Mutex
	out    *ring
	cursor int64 // what job_output has returned so far
	killed bool  // by job_kill or the session's end
}

func (j *job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out.Write(p)
}

func (j *job) finished() bool {
	select {
	case <-j.proc.done:
		return true
	default:
		return false
	}
}

// killedBy marks, for the model, a job killed by job_kill.
const killedBy = "job_kill"

// status describes the job: running, exited N, or killed by SIGNAL.
func (j *job) status() string {
	if !j.finished() {
		return "running"
	}
	s := j.proc.status().String()
	if hosts := j.proc.exit.Refused; len(hosts) > 0 {
		s += "; the sandbox refused its connections to " + strings.Join(hosts, ", ")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.killed {
		s += " (" + killedBy + ")"
	}
	return s
}

// unread returns the output not yet returned by job_output and advances the
// cursor. While the job runs, a rune cut short at the end waits for the next call.
func (j *job) unread() (data []byte, dropped int64) {
	running := !j.finished()
	j.mu.Lock()
	defer j.mu.Unlock()
	data, dropped = j.out.since(j.cursor)
	j.cursor = j.out.total
	if running {
		var rest []byte
		data, rest = splitIncomplete(data)
		j.cursor -= int64(len(rest))
	}
	return data, dropped
}

// jobTable is a session's processes: its background jobs and the foreground
// commands running now. It is session state: closing the session closes it,
// which ends every one of them.
type jobTable struct {
	mu     sync.Mutex
	jobs   []*job
	fg     map[*process]struct{} // foreground commands running
	sup    supervisor.Session    // the foreground commands' supervisor
	seq    int                   // numbers the session's jobs: ids are deterministic, so a replayed or scripted session names the same jobs
	closed bool
}

type jobsKey struct{}

func jobs(s *tool.Session) *jobTable {
	return s.State(jobsKey{}, func() any { return &jobTable{fg: map[*process]struct{}{}} }).(*jobTable)
}

var errClosed = errors.New("the session has ended")

func (t *jobTable) start(command, description, dir string, env []string, policy *sandbox.Policy) (*job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errClosed
	}
	j := &job{
		id:          fmt.Sprintf("job-%d", t.seq+1),
		command:     command,
		description: description,
		dir:         dir,
		started:     time.Now(),
		out:         newRing(jobBuffer),
	}
	p, err := spawn(spec{command: command, dir: dir, env: env, sandbox: policy, out: j})
	if err != nil {
		return nil, err
	}
	j.proc = p
	t.seq++
	t.jobs = append(t.jobs, j)
	return j, nil
}

// atLeast makes the next job's number at least n+1.
func (t *jobTable) atLeast(n int) {
	t.mu.Lock()
	t.seq = max(t.seq, n)
	t.mu.Unlock()
}

// get finds one of this session's jobs; the error lists the ones there are.
func (t *jobTable) get(id string) (*job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, j := range t.jobs {
		if j.id == id {
			return j, nil
		}
	}
	if len(t.jobs) == 0 {
		return nil, fmt.Errorf("no job %q: this session has no background jobs", id)
	}
	ids := make([]string, len(t.jobs))
	for i, j := range t.jobs {
		ids[i] = j.id
	}
	return nil, fmt.Errorf("no job %q in this session; its jobs are %s", id, strings.Join(ids, ", "))
}

func (t *jobTable) list() []*job {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.jobs)
}

// spawnForeground starts a foreground command owned by the session, so that
// ending the session ends it too; the caller runs p.wait, and done when it has
// finished.
func (t *jobTable) spawnForeground(sp spec) (p *process, done func(), err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, nil, errClosed
	}
	sp.session, sp.inline = &t.sup, true
	if p, err = spawn(sp); err != nil {
		return nil, nil, err
	}
	t.fg[p] = struct{}{}
	return p, func() {
		t.mu.Lock()
		delete(t.fg, p)
		t.mu.Unlock()
	}, nil
}

// Running says whether a job or a foreground command of the session runs.
func (t *jobTable) Running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fg) > 0 {
		return true
	}
	return slices.ContainsFunc(t.jobs, func(j *job) bool { return !j.finished() })
}

// Close ends every process of the session — SIGTERM, then SIGKILL after the
// grace — and waits until they are gone. No process starts after it.
func (t *jobTable) Close() error { return t.end(false) }

// Kill is Close without the grace: every process group gets SIGKILL at once.
func (t *jobTable) Kill() error { return t.end(true) }

func (t *jobTable) end(now bool) error {
	t.mu.Lock()
	t.closed = true
	js := slices.Clone(t.jobs)
	fg := make([]*process, 0, len(t.fg))
	for p := range t.fg {
		fg = append(fg, p)
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range js {
		wg.Go(func() { j.end(now) })
	}
	for _, p := range fg {
		wg.Go(func() {
			if now {
				p.kill()
			} else {
				p.terminate()
			}
			<-p.done
		})
	}
	wg.Wait()
	t.sup.Close()
	return nil
}

// kill terminates the job's process group and waits until it is gone; it reports
// whether the job was still running.
func (j *job) kill() bool { return j.end(false) }

// end is kill; with now, SIGKILL without the grace.
func (j *job) end(now bool) bool {
	select {
	case <-j.proc.done:
		return false
	default:
	}
	j.mu.Lock()
	j.killed = true
	j.mu.Unlock()
	if now {
		j.proc.kill()
	} else {
		j.proc.terminate()
	}
	<-j.proc.done
	return true
}

// wait waits up to d for the job to finish, or until ctx ends.
func (j *job) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-j.proc.done:
	case <-t.C:
	case <-ctx.Done():
	}
}
