package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// ErrGone says the session's process closed the connection: the session
// ended, or the process went away.
var ErrGone = errors.New("the session is no longer live (it was closed, or its dsh process ended)")

// DialOptions are a client's.
type DialOptions struct {
	// From names the client ("attach", "web" …): the log records it with the
	// answers it gives.
	From string
	// Replay, if set, gets the records the session logged before the client
	// joined, before Dial returns (the chat prints them as a resumed
	// session's); else they come first on Events, as KindRecord events.
	Replay func(session.Record)
}

// Client is a connection to a live session of another process: a
// chat.Session whose events come from Events. A permission request or a
// question it delivers is answered over the connection; the first answer
// of any client wins, and Done of the others' closes.
type Client struct {
	c     *net.UnixConn
	from  string
	hello Hello

	events chan host.Event
	done   chan struct{} // closed when the connection ends
	err    error         // why, once done is closed

	closed    chan struct{} // closed by Close
	closeOnce sync.Once

	wmu sync.Mutex // one request at a time on the wire

	mu      sync.Mutex
	status  host.Status
	next    int
	replies map[string]chan Message
	answers map[string]bool   // ids of requests that answered a permission or question
	waiting map[string]func() // a waiting permission's or question's id → its end
}

// DialSession joins session id, logged in sessionDir; ErrNotLive if no
// process offers it.
func DialSession(ctx context.Context, sessionDir, id string, o DialOptions) (*Client, error) {
	if !session.ValidID(id) {
		return nil, fmt.Errorf("invalid session id %q", id)
	}
	return Dial(ctx, Path(sessionDir, id), o)
}

// Dial joins the session whose control socket is at path. It returns once
// the client has the session's hello (and, with o.Replay, its records so far).
func Dial(ctx context.Context, path string, o DialOptions) (*Client, error) {
	if !validFrom(o.From) {
		return nil, errors.New(`"from" must be a short name of letters, digits and dashes`)
	}
	uc, err := dialIn(ctx, filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, err
	}
	c := &Client{c: uc, from: o.From, events: make(chan host.Event, 256), done: make(chan struct{}), closed: make(chan struct{}),
		replies: map[string]chan Message{}, answers: map[string]bool{}, waiting: map[string]func(){}}
	br := bufio.NewReaderSize(uc, 64<<10)
	stop := context.AfterFunc(ctx, func() { _ = uc.Close() })
	m, err := c.readMessage(br)
	switch {
	case err != nil:
	case m.Type == MsgReply && m.Error != "":
		err = errors.New(m.Error) // refused: too many clients, another user
	case m.Type != MsgHello || m.Hello == nil:
		err = fmt.Errorf("the session answered %q, not a hello", m.Type)
	}
	if err == nil && o.Replay != nil {
		err = c.catchUp(br, o.Replay)
	}
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = uc.Close()
		return nil, fmt.Errorf("join the session: %w", err)
	}
	c.hello, c.status = *m.Hello, m.Hello.Status
	go c.read(br)
	return c, nil
}

func (c *Client) readMessage(br *bufio.Reader) (Message, error) {
	line, err := readLine(br, MaxMessage)
	if err != nil {
		return Message{}, err
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("the session sent what is not a message: %w", err)
	}
	return m, nil
}

// catchUp hands the records before caught_up to replay.
func (c *Client) catchUp(br *bufio.Reader, replay func(session.Record)) error {
	for {
		m, err := c.readMessage(br)
		if err != nil {
			return err
		}
		if m.Type == MsgCaughtUp {
			return nil
		}
		if m.Type != MsgEvent || m.Event == nil || m.Event.Kind != EventRecord {
			return fmt.Errorf("the session sent %q before its records", m.Type)
		}
		r, err := DecodeRecord(m.Event.Record)
		if err != nil {
			return err
		}
		replay(r)
	}
}

// read delivers the server's messages until the connection ends.
func (c *Client) read(br *bufio.Reader) {
	err := c.loop(br)
	c.mu.Lock()
	c.err = cmpErr(err)
	ends := c.waiting
	c.waiting = map[string]func(){}
	c.mu.Unlock()
	for _, end := range ends {
		end()
	}
	close(c.done)
	close(c.events)
}

func cmpErr(err error) error {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return ErrGone
	}
	return fmt.Errorf("%w: %w", ErrGone, err)
}

func (c *Client) loop(br *bufio.Reader) error {
	for {
		m, err := c.readMessage(br)
		if err != nil {
			return err
		}
		switch m.Type {
		case MsgEvent:
			if m.Event == nil {
				continue
			}
			e, err := hostEvent(m.Event, c.pending)
			if err != nil {
				e = host.Event{Kind: host.KindNotice, Text: "an event of the session could not be read: " + err.Error()}
			}
			if e.Kind == host.KindStatus {
				c.mu.Lock()
				c.status = e.Status
				c.mu.Unlock()
			}
			if !c.emit(e) {
				return nil
			}
		case MsgEnded:
			c.mu.Lock()
			end := c.waiting[m.ID]
			delete(c.waiting, m.ID)
			c.mu.Unlock()
			if end != nil {
				end()
			}
		case MsgReply:
			c.mu.Lock()
			ch := c.replies[m.ID]
			delete(c.replies, m.ID)
			answer := c.answers[m.ID]
			delete(c.answers, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			if answer && m.Error != "" && !c.emit(host.Event{Kind: host.KindNotice, Text: "your answer did not count: " + m.Error}) {
				return nil
			}
		case MsgHello, MsgCaughtUp:
		}
	}
}

// emit hands e to Events, unless the client is closed.
func (c *Client) emit(e host.Event) bool {
	select {
	case c.events <- e:
		return true
	case <-c.closing():
		return false
	}
}

// closing is closed by Close: a reader blocked on Events lets go.
func (c *Client) closing() <-chan struct{} { return c.closed }

func (c *Client) shut() { c.closeOnce.Do(func() { close(c.closed) }) }

// pending makes a permission request or question of the wire a host one,
// whose answer goes back over the connection.
func (c *Client) pending(e *Event) (host.Event, error) {
	if p := e.Permission; e.Kind == EventPermission && p != nil {
		req, err := permissionRequest(p)
		if err != nil {
			return host.Event{}, err
		}
		id := p.ID
		hp, end := host.RemotePermission(req, func(d host.Decision) {
			c.answer(Request{Op: OpPermission, Waiting: id, Decision: decisionName(d)})
		})
		hp.Unlogged, hp.Parent, hp.Child = p.Unlogged, p.Parent, p.Child
		c.wait(id, end)
		return host.Event{Kind: host.KindPermission, Permission: hp}, nil
	}
	if q := e.Question; e.Kind == EventQuestion && q != nil {
		req, err := questionRequest(q)
		if err != nil {
			return host.Event{}, err
		}
		id := q.ID
		hq, end := host.RemoteQuestion(req, func(a card.Answer) {
			c.answer(Request{Op: OpQuestion, Waiting: id, Answer: &a})
		})
		hq.Parent, hq.Child = q.Parent, q.Child
		c.wait(id, end)
		return host.Event{Kind: host.KindQuestion, Question: hq}, nil
	}
	return host.Event{}, fmt.Errorf("a %s event without its request", e.Kind)
}

func (c *Client) wait(id string, end func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting[id] = end
}

// answer sends an answer without waiting for the reply: one that did not
// count is told as a notice.
func (c *Client) answer(r Request) {
	c.mu.Lock()
	c.next++
	r.ID = "a" + strconv.Itoa(c.next)
	c.answers[r.ID] = true
	c.mu.Unlock()
	go func() { _ = c.write(r) }()
}

func (c *Client) write(r Request) error {
	r.From = c.from
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode a request: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return c.gone()
	}
	return nil
}

// gone is why the connection ended (once it has).
func (c *Client) gone() error {
	select {
	case <-c.done:
		return c.err
	default:
		return ErrGone
	}
}

// call sends r and waits for its reply.
func (c *Client) call(ctx context.Context, r Request) (Message, error) {
	ch := make(chan Message, 1)
	c.mu.Lock()
	c.next++
	r.ID = strconv.Itoa(c.next)
	c.replies[r.ID] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.replies, r.ID)
		c.mu.Unlock()
	}
	if err := c.write(r); err != nil {
		forget()
		return Message{}, err
	}
	select {
	case m := <-ch:
		if m.Error != "" {
			return m, errors.New(m.Error)
		}
		return m, nil
	case <-ctx.Done():
		forget()
		return Message{}, ctx.Err()
	case <-c.done:
		return Message{}, c.err
	}
}

// Events are the session's events from the moment the client joined (the
// records before it first, unless Dial replayed them), closed when the
// connection ends.
func (c *Client) Events() <-chan host.Event { return c.events }

// Done is closed when the connection ends; Err says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended (ErrGone, wrapped), nil while it lasts.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Hello is the session as it was when the client joined.
func (c *Client) Hello() Hello { return c.hello }

// ID is the session's id.
func (c *Client) ID() string { return c.hello.Session }

// Status is the session's facts as it last published them.
func (c *Client) Status() host.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Running says a turn runs (or waits for an answer).
func (c *Client) Running() bool { return c.Status().State != host.StateIdle }

// Submit hands input to the session (host.Session.Submit) and waits for what
// came of it: a turn waits for one another client runs.
func (c *Client) Submit(ctx context.Context, in host.Input) (host.Answer, error) {
	m, err := c.call(ctx, Request{Op: OpSubmit, Input: &Input{Text: in.Text, Content: in.Content, Where: in.Where, Steer: in.Steer}})
	if err != nil {
		return host.Answer{}, err
	}
	if m.Answer == nil {
		return host.Answer{}, nil
	}
	return *m.Answer, nil
}

// CommandsFor is the session's table of slash commands for where, as it was
// when the client joined.
func (c *Client) CommandsFor(where host.Where) []host.Command {
	var out []host.Command
	for _, w := range c.hello.Commands {
		if w.Where&where == 0 {
			continue
		}
		hc := host.Command{Name: w.Name, Description: w.Description, ArgHint: w.ArgHint, Where: w.Where}
		switch {
		case w.MCP:
			hc.Source = "mcp:" + w.Name
		case w.Custom:
			hc.Source = w.Name
		}
		out = append(out, hc)
	}
	return out
}

// Answers says the session answers text at once, without a turn.
func (c *Client) Answers(text string, where host.Where) bool {
	name, _, ok := command.Parse(text)
	if !ok {
		return false
	}
	for _, w := range c.hello.Commands {
		if w.Name == name && w.Where&where != 0 {
			return w.Answers
		}
	}
	return false
}

// Cancel cancels the session's running turn, whoever started it.
func (c *Client) Cancel() { go func() { _, _ = c.call(context.Background(), Request{Op: OpCancel}) }() }

// Models are the models the session may be set to.
func (c *Client) Models() []host.Model {
	m, err := c.call(context.Background(), Request{Op: OpModels})
	if err != nil {
		return nil
	}
	return m.Models
}

// Points are the changes /rewind offers.
func (c *Client) Points(ctx context.Context) ([]host.Point, error) {
	m, err := c.call(ctx, Request{Op: OpPoints})
	return m.Points, err
}

// SetMode sets the session's permission mode.
func (c *Client) SetMode(ctx context.Context, m host.Mode) error {
	_, err := c.call(ctx, Request{Op: OpMode, Mode: string(m)})
	return err
}

// SetModel sets the session's model and thinking level.
func (c *Client) SetModel(ctx context.Context, model, thinking string) error {
	_, err := c.call(ctx, Request{Op: OpModel, Model: model, Thinking: thinking})
	return err
}

// Rename names the session.
func (c *Client) Rename(ctx context.Context, title string) error {
	_, err := c.call(ctx, Request{Op: OpRename, Title: title})
	return err
}

// Close leaves the session, which goes on in its process.
func (c *Client) Close() error {
	c.shut()
	err := c.c.Close()
	<-c.done
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
