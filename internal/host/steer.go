package host

import (
	"context"
	"sync"

	"github.com/dsh-dev/dsh/internal/session"
)

// Steering: a prompt the user sends while a turn runs, asking that it reach
// the model at its next step (between a step's tool results and the next
// model call) instead of waiting for the turn to end. It is logged as their
// message where the model got it; a turn that ends before taking it leaves it
// to run as a prompt of its own.

// steering holds the steering prompts not yet given to the model, and how
// the last turn ended.
type steering struct {
	mu      sync.Mutex
	pending []*steer
	stop    StopReason
}

type steer struct {
	text  string
	taken chan struct{}
}

// take gives the agent the steering prompts sent so far.
func (st *steering) take() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	texts := make([]string, 0, len(st.pending))
	for _, p := range st.pending {
		texts = append(texts, p.text)
		close(p.taken)
	}
	st.pending = nil
	return texts
}

// fold keeps how the last turn ended, for a steering prompt's answer.
func (st *steering) fold(r session.Record) {
	if r.Type != session.TypeTurnEnd {
		return
	}
	st.mu.Lock()
	st.stop = StopReason(r.StopReason)
	st.mu.Unlock()
}

// steerTurn gives text to the running turn's next step and waits for the turn
// to end, whose stop reason is the answer. ok is false when no turn runs, or
// the turn ended before taking the text: the caller runs it as a prompt.
func (s *Session) steerTurn(ctx context.Context, text string) (ans Answer, ok bool, err error) {
	s.mu.Lock()
	running, end := s.turn != nil, s.turnEnd
	s.mu.Unlock()
	if !running {
		return Answer{}, false, nil
	}
	p := &steer{text: text, taken: make(chan struct{})}
	st := &s.steering
	st.mu.Lock()
	st.pending = append(st.pending, p)
	st.mu.Unlock()
	s.notice("Steering: this prompt reaches the model at its next step.")
	withdraw := func() bool { // false: the agent took it meanwhile
		st.mu.Lock()
		defer st.mu.Unlock()
		for i, q := range st.pending {
			if q == p {
				st.pending = append(st.pending[:i], st.pending[i+1:]...)
				return true
			}
		}
		return false
	}
	select {
	case <-p.taken:
	case <-end:
		if withdraw() {
			return Answer{}, false, nil
		}
	case <-ctx.Done():
		if withdraw() {
			return Answer{}, true, ctx.Err()
		}
	}
	<-end
	st.mu.Lock()
	stop := st.stop
	st.mu.Unlock()
	return Answer{Turn: true, Stop: stop}, true, nil
}
