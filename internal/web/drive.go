package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// Driven is what the page needs of a live session it drives: one this process
// opened (a *host.Session) or one of another dsh process, joined through its
// control endpoint. Both satisfy it, so the page has one code path for both.
type Driven interface {
	ID() string
	Status() host.Status
	// Submit is the host's one door: what the user typed and attached.
	Submit(ctx context.Context, in host.Input) (host.Answer, error)
	Cancel()
	// Models are the models the session may be set to.
	Models() []host.Model
	// Rename names the session (a title record).
	Rename(title string) error
	Close() error
}

// Live is a session the page drives, with its events from the moment it was
// opened (the channel is closed when the session ends).
type Live struct {
	Session Driven
	Events  <-chan host.Event
}

// OpenRequest is what the page asks Options.Open for.
type OpenRequest struct {
	// Dir is the directory to work in: clean, absolute, inside one of
	// Options.Roots (the server checked it).
	Dir string
	// Resume is a session to reopen; "" starts a new one.
	Resume string
	// Trust is the user's answer to the folder's trust question; nil when
	// the page has not asked it.
	Trust *bool
}

// TrustError is Options.Open's error when the folder's project settings wait
// for the user to trust the folder or not: the page asks, then opens again
// with the answer.
type TrustError struct {
	Dir string
	// What names the project's settings (".dsh/config.toml", …); Ignored says
	// what they would set once trusted.
	What    string
	Ignored []string
}

func (e *TrustError) Error() string {
	return fmt.Sprintf("trust %s? its %s would set what is ignored until then", e.Dir, e.What)
}

// driver follows one driven session's events for the pages showing it: the
// session's status and the permission requests and questions waiting for the
// user, which the log does not hold (the records reach the page by tailing the
// log, as for any session).
type driver struct {
	id   string
	live Live
	// ctx is the session's turns' context: a turn outlives the request that
	// started it, and ends with the server.
	ctx context.Context
	b   *builder

	mu     sync.Mutex
	status host.Status
	asks   []*ask // waiting, in the order they were asked
	n      int    // asks so far: their keys
	subs   map[chan event]struct{}
	ended  bool
}

// ask is a permission request or a question waiting for the user.
type ask struct {
	key  string
	perm *host.Permission
	q    *host.Question
	html []byte // its box
}

func (a *ask) done() <-chan struct{} {
	if a.perm != nil {
		return a.perm.Done()
	}
	return a.q.Done()
}

// subBuffer is how many events a page's control stream may fall behind
// before it is dropped: the browser reconnects and starts from a snapshot.
const subBuffer = 64

func newDriver(ctx context.Context, s *Server, l Live) *driver {
	id := l.Session.ID()
	return &driver{id: id, live: l, ctx: ctx, b: s.newBuilder(id, false), status: l.Session.Status(),
		subs: map[chan event]struct{}{}}
}

// run folds the session's events until they end, then calls gone.
func (d *driver) run(gone func()) {
	for e := range d.live.Events {
		d.event(e)
	}
	d.mu.Lock()
	d.ended = true
	for ch := range d.subs {
		close(ch)
	}
	d.subs = nil
	d.mu.Unlock()
	gone()
}

func (d *driver) event(e host.Event) {
	switch e.Kind {
	case host.KindStatus:
		d.mu.Lock()
		d.status = e.Status
		d.broadcastLocked(d.statusEvent())
		d.mu.Unlock()
	case host.KindPermission:
		d.add(&ask{perm: e.Permission})
	case host.KindQuestion:
		d.add(&ask{q: e.Question})
	case host.KindNotice:
		d.notice(e.Text)
	case host.KindDelta:
		// The model's words as they stream, until the record that holds them
		// reaches the page through the log.
		var w bytes.Buffer
		out{&w}.delta(e.Delta)
		d.send(event{"delta", w.Bytes()})
	case host.KindModelRequest:
		d.send(event{"stream", nil}) // what streamed before is void or logged
	case host.KindRecord:
		if t := e.Record.Type; t == session.TypeAssistant || t == session.TypeThinking || t == session.TypeTurnEnd {
			d.send(event{"stream", nil})
		}
	case host.KindCallStarted, host.KindUsage, host.KindChild:
		// The log holds what these lead to; the page tails it.
	}
}

// add shows a new ask on every page until it is answered — here, in another
// client, or no longer waited for (its turn was cancelled).
func (d *driver) add(a *ask) {
	d.mu.Lock()
	d.n++
	a.key = "a" + strconv.Itoa(d.n)
	var w bytes.Buffer
	out{&w}.ask(d.b.askView(a))
	a.html = w.Bytes()
	d.asks = append(d.asks, a)
	d.broadcastLocked(event{"ask", a.html})
	d.mu.Unlock()
	go func() {
		<-a.done()
		d.mu.Lock()
		defer d.mu.Unlock()
		for i, x := range d.asks {
			if x == a {
				d.asks = append(d.asks[:i], d.asks[i+1:]...)
				break
			}
		}
		d.broadcastLocked(event{"asked", []byte(a.key)})
	}()
}

// answer answers the ask key: a decision for a permission, a choice or text for
// a question. It reports whether the ask was still waiting.
func (d *driver) answer(key string, r answerRequest) (bool, error) {
	d.mu.Lock()
	var a *ask
	for _, x := range d.asks {
		if x.key == key {
			a = x
		}
	}
	d.mu.Unlock()
	if a == nil {
		return false, nil
	}
	if a.perm != nil {
		dec, ok := decisions[r.Decision]
		if !ok {
			return false, fmt.Errorf("unknown decision %q (allow_once, allow_always or reject)", r.Decision)
		}
		if dec == host.AllowAlways && !a.perm.Request.Approval.Remember {
			return false, errors.New("this call cannot be allowed always: allow it once or reject it")
		}
		a.perm.Answer(dec)
		return true, nil
	}
	ans, err := questionAnswer(a.q, r)
	if err != nil {
		return false, err
	}
	a.q.Answer(ans)
	return true, nil
}

// decisions are the page's names of the permission decisions.
var decisions = map[string]host.Decision{
	"allow_once": host.AllowOnce, "allow_always": host.AllowAlways, "reject": host.Reject,
}

func (d *driver) notice(text string) {
	var w bytes.Buffer
	out{&w}.notice(text)
	d.send(event{"notice", w.Bytes()})
}

func (d *driver) send(e event) {
	d.mu.Lock()
	d.broadcastLocked(e)
	d.mu.Unlock()
}

func (d *driver) statusEvent() event {
	var w bytes.Buffer
	out{&w}.status(d.status)
	return event{"status", w.Bytes()}
}

// broadcastLocked sends e to every page; one that has fallen behind is
// dropped (its stream ends, the browser reconnects and gets a snapshot).
func (d *driver) broadcastLocked(e event) {
	for ch := range d.subs {
		select {
		case ch <- e:
		default:
			delete(d.subs, ch)
			close(ch)
		}
	}
}

// subscribe returns the events for one page, starting with a snapshot (the
// status and every waiting ask); ok is false once the session has ended.
func (d *driver) subscribe() (ch chan event, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return nil, false
	}
	ch = make(chan event, subBuffer+len(d.asks)+1)
	ch <- d.statusEvent()
	for _, a := range d.asks {
		ch <- event{"ask", a.html}
	}
	d.subs[ch] = struct{}{}
	return ch, true
}

func (d *driver) unsubscribe(ch chan event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.subs[ch]; ok {
		delete(d.subs, ch)
		close(ch)
	}
}

// submit hands the input to the session's one door. A turn runs past the
// request, so it runs here; what goes wrong is told on the pages.
func (d *driver) submit(in host.Input) {
	go func() {
		ans, err := d.live.Session.Submit(d.ctx, in)
		switch {
		case err != nil:
			d.notice(err.Error())
		case ans.Fork != "":
			d.notice("the conversation goes on in session " + ans.Fork + " (open it from the list)")
		}
	}()
}

// drivers are the sessions this server drives, by id.
type drivers struct {
	mu sync.Mutex
	m  map[string]*driver
}

func (ds *drivers) get(id string) *driver {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.m[id]
}

// start drives l: it is followed until its events end.
func (s *Server) start(l Live) *driver {
	d := newDriver(s.ctx, s, l)
	s.driven.mu.Lock()
	if s.driven.m == nil {
		s.driven.m = map[string]*driver{}
	}
	s.driven.m[d.id] = d
	s.driven.mu.Unlock()
	go d.run(func() {
		s.driven.mu.Lock()
		if s.driven.m[d.id] == d {
			delete(s.driven.m, d.id)
		}
		s.driven.mu.Unlock()
	})
	return d
}

// Close closes the sessions the server drives (the ones it opened end; a
// joined one is only left).
func (s *Server) Close() error {
	s.stop()
	s.driven.mu.Lock()
	ds := make([]*driver, 0, len(s.driven.m))
	for _, d := range s.driven.m {
		ds = append(ds, d)
	}
	s.driven.mu.Unlock()
	var errs []error
	for _, d := range ds {
		if err := d.live.Session.Close(); err != nil {
			slog.Error("web: close", "session", d.id, "err", err)
			errs = append(errs, fmt.Errorf("close session %s: %w", d.id, err))
		}
	}
	return errors.Join(errs...)
}
