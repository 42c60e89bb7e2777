package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// helloWait bounds the runner's start: a program that is not the runner
// may never say hello, and the first model call would wait for ever.
var helloWait = 10 * time.Second

// RunnerEnv names the model runner's path (absolute) when it is not
// dsh-model beside dsh.
const RunnerEnv = "DSH_MODEL_RUNNER"

// Provider is a provider the runner builds and streams.
type Provider struct {
	spec Spec
	name string
}

// New builds spec's provider in the runner, which it starts if it has not
// yet: a missing key or a bad setting fails here, as it would in process.
func New(ctx context.Context, spec Spec) (*Provider, error) {
	rp, err := do(ctx, call{Op: opBuild, Spec: &spec}, nil)
	if err != nil {
		return nil, err
	}
	return &Provider{spec: spec, name: rp.Name}, nil
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return p.name }

// Stream implements provider.Provider.
func (p *Provider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	rp, err := do(ctx, call{Op: opStream, Spec: &p.spec, Req: &req}, onDelta)
	if err != nil {
		return nil, err
	}
	if rp.Resp == nil {
		return nil, errors.New("the model runner ended the stream without a message")
	}
	return rp.Resp, nil
}

// List is the models spec's provider serves.
func List(ctx context.Context, spec Spec) ([]models.Info, error) {
	rp, err := do(ctx, call{Op: opList, Spec: &spec}, nil)
	return rp.Models, err
}

// Served is the first model the OpenAI-compatible server of spec lists.
func Served(ctx context.Context, spec Spec) (string, error) {
	rp, err := do(ctx, call{Op: opServed, Spec: &spec}, nil)
	return rp.Model, err
}

// do makes one call, handing its deltas to onDelta in this goroutine. A
// cancelled ctx cancels the call in the runner and returns at once.
func do(ctx context.Context, c call, onDelta func(provider.Delta)) (reply, error) {
	r, err := running()
	if err != nil {
		return reply{}, err
	}
	m := r.open(&c)
	defer r.close(c.ID)
	line, err := encodeLine(c)
	if err != nil { // this call's own content: the runner is fine
		return reply{}, fmt.Errorf("a request the model runner cannot be sent: %w", err)
	}
	if err := r.write(line); err != nil {
		return reply{}, r.died(fmt.Errorf("writing to the model runner: %w", err))
	}
	for {
		select {
		case <-ctx.Done():
			if cancel, err := encodeLine(call{ID: c.ID, Op: opCancel}); err == nil {
				_ = r.write(cancel)
			}
			return reply{}, ctx.Err()
		case <-m.ready:
		}
		// The failure first: replies that came before it are still taken.
		failed := m.failed()
		for _, rp := range m.take() {
			if rp.Done {
				if rp.Err != nil {
					return rp, rp.Err
				}
				return rp, nil
			}
			if rp.Delta != nil && onDelta != nil {
				onDelta(*rp.Delta)
			}
		}
		if failed != nil {
			return reply{}, failed
		}
	}
}

// runner is the model runner process, shared by the process's sessions.
type runner struct {
	cmd *exec.Cmd

	wmu sync.Mutex
	in  io.WriteCloser

	mu    sync.Mutex
	next  uint64
	calls map[uint64]*mailbox
	err   error // set once it is gone
}

var current struct {
	sync.Mutex
	r *runner
}

// running is the runner, started if none runs; one that died is started
// again.
func running() (*runner, error) {
	current.Lock()
	defer current.Unlock()
	if r := current.r; r != nil && r.alive() {
		return r, nil
	}
	r, err := start()
	if err != nil {
		return nil, err
	}
	current.r = r
	return r, nil
}

// path is where the runner is: RunnerEnv, else dsh-model beside this
// executable. Not PATH: the runner is handed every key, and a PATH entry can
// lie inside a repository (direnv's PATH_add node_modules/.bin).
func path() (string, error) {
	if p := os.Getenv(RunnerEnv); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("%s must be an absolute path, not %q", RunnerEnv, p)
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding dsh-model beside dsh: %w", err)
	}
	p := filepath.Join(filepath.Dir(exe), "dsh-model")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("dsh-model, which talks to the model providers, is not installed beside dsh in %s; "+
			"install both from dsh's source (go install ./cmd/... in its folder), or name it with %s", filepath.Dir(exe), RunnerEnv)
	}
	return p, nil
}

func start() (*runner, error) {
	bin, err := path()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Stderr = os.Stderr
	dieWithDsh(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the model runner %s: %w", bin, err)
	}
	r := &runner{cmd: cmd, in: in, calls: map[uint64]*mailbox{}}
	br := bufio.NewReader(out)
	var hi reply
	said := make(chan error, 1)
	go func() { said <- readLine(br, &hi) }()
	select {
	case err = <-said:
	case <-time.After(helloWait):
		err = fmt.Errorf("it did not answer within %v", helloWait)
	}
	if err != nil || hi.Name != hello {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err == nil {
			err = fmt.Errorf("it speaks %q, this dsh %q: install dsh and dsh-model from the same build", hi.Name, hello)
		}
		return nil, fmt.Errorf("the model runner %s: %w", bin, err)
	}
	go r.read(br)
	return r, nil
}

// read hands each reply to its call until the runner's output ends.
func (r *runner) read(br *bufio.Reader) {
	for {
		var rp reply
		if err := readLine(br, &rp); err != nil {
			if !errors.Is(err, io.EOF) {
				// Nobody reads it any more: its calls could block on a
				// full pipe, and it would never end by itself.
				_ = r.cmd.Process.Kill()
			}
			_ = r.in.Close()
			if werr := r.cmd.Wait(); werr != nil && errors.Is(err, io.EOF) {
				err = werr
			}
			_ = r.died(fmt.Errorf("the model runner stopped: %w", err))
			return
		}
		r.mu.Lock()
		m := r.calls[rp.ID]
		r.mu.Unlock()
		if m != nil { // else a call that was cancelled and left
			m.put(rp)
		}
	}
}

func (r *runner) alive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err == nil
}

// died fails every call waiting on the runner with err and returns it.
func (r *runner) died(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
		_ = r.in.Close() // a runner given up on ends with its input
	}
	for _, m := range r.calls {
		m.fail(r.err)
	}
	return r.err
}

func (r *runner) open(c *call) *mailbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	c.ID = r.next
	m := &mailbox{ready: make(chan struct{}, 1)}
	if r.err != nil {
		m.fail(r.err)
	}
	r.calls[c.ID] = m
	return m
}

func (r *runner) close(id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.calls, id)
}

func (r *runner) write(line []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, err := r.in.Write(line)
	return err
}

// mailbox holds a call's replies until its goroutine takes them: the reader
// never waits on a slow caller, so one session's stream cannot stall
// another's.
type mailbox struct {
	ready chan struct{}

	mu      sync.Mutex
	replies []reply
	err     error
}

func (m *mailbox) put(rp reply) {
	m.mu.Lock()
	m.replies = append(m.replies, rp)
	m.mu.Unlock()
	m.wake()
}

func (m *mailbox) fail(err error) {
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
	m.wake()
}

func (m *mailbox) wake() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() []reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.replies
	m.replies = nil
	return out
}

func (m *mailbox) failed() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
