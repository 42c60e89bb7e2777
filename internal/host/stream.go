package host

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
)

// Kind says what an Event holds.
type Kind int

// The kinds of events. Only KindRecord is persisted; the others are moments
// between records that a live view shows and a replay does not need.
const (
	KindRecord       Kind = iota // Record: persisted (progress past its cap is delivered but not kept)
	KindDelta                    // Delta: model text or thinking as it streams
	KindModelRequest             // a model request starts: streamed text not completed by a record is void
	KindCallStarted              // CallID: a permitted call begins to run
	KindPermission               // Permission: the user is asked about a call
	KindUsage                    // Usage: the tokens of a model call that just ended
	KindStatus                   // Status: the session's facts changed (model, window, usage, cost, mode, cwd …)
	KindQuestion                 // Question: a tool asks the user (the plan's approval, ask_user)
	KindChild                    // Child: an event of a subagent's session, nested under its task call
	KindNotice                   // Text: something the user is told about their input (a file not attached)
)

// Event is one item of a session's ordered stream.
type Event struct {
	Kind       Kind
	Record     session.Record
	Delta      provider.Delta
	CallID     string
	Permission *Permission
	Usage      session.Usage
	Status     Status
	Question   *Question
	Child      *Child
	Text       string
}

// Child is an event of a child session (a subagent's): its records and its
// calls starting, which consumers nest under the parent's task call Call. A
// replay finds the same records in the child's log, which the task's result
// names (ReplayChild).
type Child struct {
	Call    string // the parent's task call
	Session string // the child session's id
	Agent   string
	Event   Event // KindRecord or KindCallStarted
}

// Question is a pending question of a tool to the user. The first Answer
// decides it; Done is closed once it no longer waits.
type Question struct {
	Request agent.QuestionRequest
	// Parent and Child are set for a subagent's question: the task call
	// that started it and its child session (as in a Permission).
	Parent, Child string
	answer        chan answer
	done          chan struct{}
	once          sync.Once
	// send, for a question another process asks (RemoteQuestion), takes
	// the answer there instead.
	send  func(card.Answer)
	taken atomic.Bool // an answer was taken: later ones are not
}

// NewQuestion returns a pending question about req.
func NewQuestion(req agent.QuestionRequest) *Question {
	return &Question{Request: req, answer: make(chan answer, 1), done: make(chan struct{})}
}

// RemoteQuestion is a question that a session in another process asks (a
// client of its control socket shows it): Answer hands the answer to send,
// and end, called when that session says it no longer waits, closes Done.
func RemoteQuestion(req agent.QuestionRequest, send func(card.Answer)) (q *Question, end func()) {
	q = &Question{Request: req, done: make(chan struct{}), send: send}
	return q, q.end
}

// Wait waits for the answer, or for ctx to end, and then stops the question
// waiting: it is the asking side's.
func (q *Question) Wait(ctx context.Context) (card.Answer, error) {
	a, err := q.wait(ctx)
	return a.a, err
}

func (q *Question) wait(ctx context.Context) (answer, error) {
	defer q.end()
	select {
	case a := <-q.answer:
		return a, a.err
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

type answer struct {
	a    card.Answer
	err  error
	from string
}

// Answer answers the question; later answers are ignored. The zero Answer
// says the user chose none of the choices.
func (q *Question) Answer(a card.Answer) { q.AnswerFrom(a, "") }

// AnswerFrom is Answer by the client from ("web", "attach" …), which the
// log records with the answer; "" is the session's own consumer. It reports
// whether the answer was taken: false when another came first or the
// question no longer waits.
func (q *Question) AnswerFrom(a card.Answer, from string) bool {
	if q.send != nil {
		q.send(a)
		return true
	}
	return q.decide(answer{a: a, from: from})
}

// Unanswered says that no answer can be had, and why (dsh run's stdin is at
// its end): the tool tells the model so.
func (q *Question) Unanswered(why error) {
	if q.send != nil {
		return // the session that asks has other clients to answer
	}
	q.decide(answer{err: why})
}

func (q *Question) decide(a answer) bool {
	select {
	case <-q.done:
		return false
	default:
	}
	if !q.taken.CompareAndSwap(false, true) {
		return false
	}
	select {
	case q.answer <- a: // the first, into a buffer of one
	default: // a question made without NewQuestion (a test's) takes none
	}
	return true
}

// Done is closed when the question stops waiting.
func (q *Question) Done() <-chan struct{} { return q.done }

func (q *Question) end() { q.once.Do(func() { close(q.done) }) }

// Permission is a pending permission request. The first Answer decides it; Done
// is closed once it no longer waits (answered, or its turn was cancelled).
type Permission struct {
	Request agent.PermissionRequest
	// Unlogged says that no record has shown the request's card (an undo's
	// diff): a consumer draws it with the question.
	Unlogged bool
	// Parent is, for a subagent's call, the parent's task call it runs under
	// and Child the subagent's session: Request.CallID is the child's call.
	Parent, Child string
	answer        chan decided
	done          chan struct{}
	once          sync.Once
	// send, for a request of a session in another process
	// (RemotePermission), takes the decision there instead.
	send  func(agent.Decision)
	taken atomic.Bool // a decision was taken: later ones are not
}

type decided struct {
	d    agent.Decision
	from string
}

// RemotePermission is a permission request of a session in another process
// (a client of its control socket shows it): Answer hands the decision to
// send, and end, called when that session says it no longer waits, closes
// Done.
func RemotePermission(req agent.PermissionRequest, send func(agent.Decision)) (p *Permission, end func()) {
	p = &Permission{Request: req, done: make(chan struct{}), send: send}
	return p, p.end
}

// Answer decides the request; later answers are ignored.
func (p *Permission) Answer(d agent.Decision) { p.AnswerFrom(d, "") }

// AnswerFrom is Answer by the client from ("web", "attach" …), which the
// log records with the decision; "" is the session's own consumer. It
// reports whether the decision was taken: false when another came first or
// the request no longer waits.
func (p *Permission) AnswerFrom(d agent.Decision, from string) bool {
	if p.send != nil {
		p.send(d)
		return true
	}
	select {
	case <-p.done:
		return false
	default:
	}
	if !p.taken.CompareAndSwap(false, true) {
		return false
	}
	select {
	case p.answer <- decided{d, from}: // the first, into a buffer of one
	default: // a request no session asks (a test's) takes none
	}
	return true
}

// Done is closed when the request stops waiting.
func (p *Permission) Done() <-chan struct{} { return p.done }

func (p *Permission) end() { p.once.Do(func() { close(p.done) }) }

// maxQueue is how many events a subscriber may fall behind before its progress
// events are dropped.
const maxQueue = 4096

// bus publishes a session's events in one order to every subscriber. Records are
// put in the log and published under one lock, so every subscriber sees them in
// the order the log holds them, with the ephemeral events where they happened.
type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// forward, if set, gets every event too, in order (a child session's
	// bus hands its events to the parent's).
	forward func(Event)
	seq     uint64 // events published so far
	closed  bool
	// waiting are the permission requests and questions published and not
	// yet ended, for a client that joins (Join).
	waiting []Event
}

func newBus() *bus { return &bus{subs: map[*Subscription]struct{}{}} }

// ask publishes a permission or question event and keeps it among the waiting
// until the function it returns is called.
func (b *bus) ask(e Event) func() {
	b.mu.Lock()
	b.waiting = append(b.waiting, e)
	b.publishLocked(e)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.waiting = slices.DeleteFunc(b.waiting, func(w Event) bool {
			return w.Permission == e.Permission && w.Question == e.Question
		})
	}
}

// put logs rec and publishes it as persisted.
func (b *bus) put(log *session.Log, rec session.Record) (session.Record, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out, err := log.Put(rec)
	if err != nil {
		return out, err
	}
	b.publishLocked(Event{Kind: KindRecord, Record: out})
	return out, nil
}

func (b *bus) publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.publishLocked(e)
}

func (b *bus) publishLocked(e Event) {
	if b.closed {
		return
	}
	b.seq++
	if b.forward != nil {
		b.forward(e)
	}
	for s := range b.subs {
		s.push(e, b.seq)
	}
}

func (b *bus) subscribe(fn func(Event)) *Subscription { return b.subscribeAt(fn, nil, false) }

// subscribeAt subscribes fn; at, if set, is called at the moment it starts,
// under the lock that orders the events. recordsOnly skips every other event:
// it is not queued, so it does not wake the subscriber's goroutine.
func (b *bus) subscribeAt(fn func(Event), at func(), recordsOnly bool) *Subscription {
	s := &Subscription{fn: fn, bus: b, done: make(chan struct{}), recordsOnly: recordsOnly}
	s.cond = sync.NewCond(&s.mu)
	b.mu.Lock()
	if at != nil {
		at()
	}
	s.handled, s.seen = b.seq, b.seq
	if b.closed {
		s.stopped = true
	} else {
		b.subs[s] = struct{}{}
	}
	b.mu.Unlock()
	go s.run()
	return s
}

// close stops publishing and gives each subscriber up to wait to handle what it
// has queued; one that is stuck (a client that stopped reading) is abandoned.
func (b *bus) close(wait time.Duration) {
	b.mu.Lock()
	b.closed = true
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	deadline := time.After(wait)
	for _, s := range subs {
		s.finish()
		select {
		case <-s.done:
		case <-deadline:
		}
	}
}

// Subscription is one consumer's view of the stream.
type Subscription struct {
	fn  func(Event)
	bus *bus

	mu          sync.Mutex
	cond        *sync.Cond
	q           []queued
	seen        uint64 // the sequence number of the last event pushed or dropped
	handled     uint64 // the sequence number of the last event handled, or seen once the queue is empty
	dropped     int    // progress events dropped so far
	stopped     bool   // no more events will come
	busy        bool   // fn is handling an event
	recordsOnly bool   // see subscribeAt
	done        chan struct{}
}

type queued struct {
	e   Event
	seq uint64
}

func (s *Subscription) push(e Event, seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.seen = seq
	if s.recordsOnly && e.Kind != KindRecord {
		if len(s.q) == 0 && !s.busy {
			s.handled = seq // nothing before it waits: Flush need not
		}
		return
	}
	if len(s.q) >= maxQueue && e.Kind == KindRecord && e.Record.Type == session.TypeProgress {
		s.dropped++
		return
	}
	s.q = append(s.q, queued{e, seq})
	s.cond.Broadcast()
}

func (s *Subscription) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.q) == 0 && !s.stopped {
			s.cond.Wait()
		}
		if len(s.q) == 0 {
			s.mu.Unlock()
			return
		}
		q := s.q[0]
		s.q[0] = queued{}
		s.q = s.q[1:]
		s.busy = true
		s.mu.Unlock()

		s.fn(q.e)

		s.mu.Lock()
		s.busy = false
		s.handled = q.seq
		if len(s.q) == 0 {
			s.handled = s.seen
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// finish lets the subscriber handle what is queued, then end.
func (s *Subscription) finish() {
	s.mu.Lock()
	s.stopped = true
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Flush waits, at most d, until the subscriber has handled every event published
// before the call — an ACP prompt answers after the turn's last update is out. It
// reports whether it caught up.
func (s *Subscription) Flush(d time.Duration) bool {
	s.bus.mu.Lock()
	target := s.bus.seq
	s.bus.mu.Unlock()
	s.mu.Lock()
	done := s.handled >= target || (s.stopped && len(s.q) == 0)
	s.mu.Unlock()
	if done {
		return true // no timer for what is handled already
	}
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.handled < target && (!s.stopped || len(s.q) > 0) {
		if !time.Now().Before(deadline) {
			return false
		}
		s.cond.Wait()
	}
	return true
}

// Dropped is how many progress events were dropped because the subscriber fell
// behind.
func (s *Subscription) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close stops the subscription; events queued are dropped. It waits for the
// handler to return from the event it is handling, so it must not be called from
// the handler.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	s.stopped = true
	s.q = nil
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
}

// Done is closed when the subscription has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// notice tells the user something about their input, in order with the
// session's records (KindNotice).
func (s *Session) notice(text string) { s.bus.publish(Event{Kind: KindNotice, Text: text}) }
