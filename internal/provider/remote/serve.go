package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/proxyenv"
)

// Backend builds what the runner serves: the providers of the vendors' SDKs
// (package vendors).
type Backend interface {
	Build(Spec) (provider.Provider, error)
	List(context.Context, Spec) ([]models.Info, error)
	Served(context.Context, Spec) (string, error)
}

// Serve is the runner: it answers the calls read from r on w, each in its
// own goroutine, until r ends, then cancels what still runs and returns once
// it has stopped. A provider built once serves every later call of the same
// spec, so what it keeps (a cloud's token) is kept.
func Serve(r io.Reader, w io.Writer, b Backend) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancelAll := context.WithCancel(context.Background())
	defer cancelAll() // before the wait: the calls still running end
	s := &server{b: b, w: w, running: map[uint64]context.CancelFunc{}, built: map[string]provider.Provider{}}
	if err := s.send(reply{Name: hello}); err != nil {
		return err
	}
	in := bufio.NewReader(r)
	for {
		var c call
		err := readLine(in, &c)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.Op == opCancel {
			s.mu.Lock()
			if stop, ok := s.running[c.ID]; ok {
				stop()
			}
			s.mu.Unlock()
			continue
		}
		cctx, stop := context.WithCancel(ctx)
		s.mu.Lock()
		s.running[c.ID] = stop
		s.mu.Unlock()
		wg.Go(func() {
			rp := s.answer(cctx, c)
			s.mu.Lock()
			delete(s.running, c.ID)
			s.mu.Unlock()
			stop()
			rp.ID, rp.Done = c.ID, true
			_ = s.send(rp) // a closed pipe: dsh is gone, and r ends too
		})
	}
}

type server struct {
	b Backend

	wmu sync.Mutex
	w   io.Writer

	mu      sync.Mutex
	running map[uint64]context.CancelFunc
	built   map[string]provider.Provider // by the spec's JSON
}

// send writes rp. One that cannot be encoded (a provider's message JSON
// refuses) is, if it ends its call, the call's failure: the call still ends.
func (s *server) send(rp reply) error {
	line, err := encodeLine(rp)
	if err != nil {
		if !rp.Done {
			return err
		}
		line, err = encodeLine(reply{ID: rp.ID, Done: true, Err: wireErr(fmt.Errorf("the model's answer could not be passed on: %w", err))})
		if err != nil {
			return err
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.Write(line)
	return err
}

// answer runs one call.
func (s *server) answer(ctx context.Context, c call) reply {
	if c.Spec == nil {
		return failed(errors.New("a call without a provider"))
	}
	// dsh's proxy, hidden from this process's environment like every
	// secret, before the first request here reads it.
	if err := proxyenv.Restore(c.Spec.Getenv); err != nil {
		return failed(err)
	}
	switch c.Op {
	case opBuild:
		p, err := s.provider(*c.Spec)
		if err != nil {
			return failed(err)
		}
		return reply{Name: p.Name()}
	case opStream:
		if c.Req == nil {
			return failed(errors.New("a stream without a request"))
		}
		p, err := s.provider(*c.Spec)
		if err != nil {
			return failed(err)
		}
		restoreNil(c.Req)
		resp, err := p.Stream(ctx, *c.Req, func(d provider.Delta) {
			_ = s.send(reply{ID: c.ID, Delta: &d})
		})
		if err != nil {
			return failed(err)
		}
		return reply{Resp: resp}
	case opList:
		ms, err := s.b.List(ctx, *c.Spec)
		return reply{Models: ms, Err: wireErr(err)}
	case opServed:
		m, err := s.b.Served(ctx, *c.Spec)
		return reply{Model: m, Err: wireErr(err)}
	}
	return failed(errors.New("an operation the model runner does not know: " + c.Op))
}

// provider is the spec's provider, built on its first call.
func (s *server) provider(spec Spec) (provider.Provider, error) {
	key, err := json.Marshal(spec, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	p, ok := s.built[string(key)]
	s.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err = s.b.Build(spec)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.built[string(key)]; ok {
		return q, nil
	}
	s.built[string(key)] = p
	return p, nil
}

func failed(err error) reply { return reply{Err: wireErr(err)} }

// wireErr is err as it crosses the pipe; nil for nil.
func wireErr(err error) *wireError {
	if err == nil {
		return nil
	}
	return &wireError{Msg: err.Error(), Auth: errors.Is(err, provider.ErrAuth), Unavailable: errors.Is(err, provider.ErrUnavailable)}
}
