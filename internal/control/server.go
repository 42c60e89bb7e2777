package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// Bounds of a server: how many clients a session takes at once, how many
// requests of one client run at once, and how long a client may leave a
// message unread before it is dropped (its events would pile up in memory).
const (
	maxClients   = 32
	maxRequests  = 8
	writeTimeout = 30 * time.Second
)

// defaultFrom names a client that did not say which it is.
const defaultFrom = "client"

// Serve offers the live session s to other clients on its control socket,
// Path(dir of its log, its id), until the returned closer is closed (with the
// session: it is host.Options.Live). A file or link found at the socket's
// path is replaced; a socket another process answers on is an error.
func Serve(s *host.Session) (io.Closer, error) {
	sessionDir, name := dirOf(s.Path()), s.ID()+sockExt
	d, err := openDir(Dir(sessionDir), true)
	if err != nil {
		return nil, err
	}
	ln, err := listen(d, name)
	if err != nil {
		_ = d.Close() // read-only
		return nil, err
	}
	srv := &server{s: s, dir: d, name: name, ln: ln, uid: os.Getuid(), ids: map[any]string{}, waiting: map[string]host.Event{}}
	srv.wg.Go(srv.accept)
	return srv, nil
}

// dirOf is the directory of a log's path.
func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i]
		}
	}
	return "."
}

// listen binds the socket name in d, 0600.
func listen(d *os.File, name string) (*net.UnixListener, error) {
	t, err := lstatAt(d, name)
	switch {
	case err == nil && t == typeSocket:
		if c, err := net.Dial("unix", short(d, name)); err == nil {
			_ = c.Close() // a probe
			return nil, errors.New("another dsh process offers this session to clients already")
		}
		if err := unlinkAt(d, name); err != nil {
			return nil, fmt.Errorf("remove a stale control socket: %w", err)
		}
	case err == nil:
		// A file or a link where the socket goes: removed, never followed.
		if err := unlinkAt(d, name); err != nil {
			return nil, fmt.Errorf("remove what is at the control socket's path: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln, err := listenAt(d, name)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := chmodAt(d, name, 0o600); err != nil {
		_ = ln.Close()
		_ = unlinkAt(d, name)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

type server struct {
	s    *host.Session
	dir  *os.File
	name string
	ln   *net.UnixListener
	uid  int
	wg   sync.WaitGroup

	mu      sync.Mutex
	ids     map[any]string        // a waiting *host.Permission or *host.Question → its id
	waiting map[string]host.Event // id → the waiting one's event
	n       int                   // ids given so far
	clients int
	closed  bool
}

// Close stops taking clients and removes the socket. The clients connected
// stay until the session's events end (they get its last records).
func (srv *server) Close() error {
	srv.mu.Lock()
	srv.closed = true
	srv.mu.Unlock()
	err := srv.ln.Close()
	srv.wg.Wait()
	if uerr := unlinkAt(srv.dir, srv.name); uerr != nil && !errors.Is(uerr, fs.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("remove the control socket: %w", uerr))
	}
	return errors.Join(err, srv.dir.Close())
}

func (srv *server) accept() {
	for {
		c, err := srv.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		go srv.serve(c)
	}
}

// admit checks a new client: the same user, and room for it.
func (srv *server) admit(c *net.UnixConn) error {
	uid, err := peerUID(c)
	if err != nil {
		return err
	}
	if err := CheckPeer(uid, srv.uid); err != nil {
		return err
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closed {
		return host.ErrClosed
	}
	if srv.clients >= maxClients {
		return fmt.Errorf("too many clients on this session (at most %d)", maxClients)
	}
	srv.clients++
	return nil
}

// idFor is the id of a waiting permission or question, given the first time
// a client is sent it and forgotten when it no longer waits.
func (srv *server) idFor(e host.Event) (string, <-chan struct{}) {
	var key any
	var done <-chan struct{}
	if e.Permission != nil {
		key, done = e.Permission, e.Permission.Done()
	} else {
		key, done = e.Question, e.Question.Done()
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if id, ok := srv.ids[key]; ok {
		return id, done
	}
	srv.n++
	id := waitingID(srv.n)
	srv.ids[key], srv.waiting[id] = id, e
	go func() {
		<-done
		srv.mu.Lock()
		delete(srv.ids, key)
		delete(srv.waiting, id)
		srv.mu.Unlock()
	}()
	return id, done
}

func (srv *server) lookup(id string) (host.Event, bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	e, ok := srv.waiting[id]
	return e, ok
}

// conn is one client's connection.
type conn struct {
	c    *net.UnixConn
	mu   sync.Mutex // one message at a time
	dead bool
}

func (cn *conn) send(m Message) {
	b, err := json.Marshal(m, recordOpts)
	if err != nil {
		b, _ = json.Marshal(Message{Type: MsgReply, ID: m.ID, Error: "dsh could not encode its answer: " + err.Error()})
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.dead {
		return
	}
	_ = cn.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := cn.c.Write(append(b, '\n')); err != nil {
		// A client that does not read is let go: its events would pile up.
		cn.dead = true
		_ = cn.c.Close()
	}
}

func (srv *server) serve(c *net.UnixConn) {
	if err := srv.admit(c); err != nil {
		cn := &conn{c: c}
		cn.send(Message{Type: MsgReply, Error: err.Error()})
		_ = c.Close()
		return
	}
	defer func() {
		srv.mu.Lock()
		srv.clients--
		srv.mu.Unlock()
	}()
	cn := &conn{c: c}
	ready := make(chan struct{})
	joined, sub := srv.s.Join(func(e host.Event) {
		<-ready
		srv.event(cn, e)
	})
	go func() {
		<-sub.Done() // the session ended: its last events are out
		_ = c.Close()
	}()
	srv.hello(cn, joined)
	close(ready)

	srv.read(cn)
	_ = c.Close()
	sub.Close()
}

// hello sends what a client needs to catch up: the session, its records so
// far, what waits for an answer.
func (srv *server) hello(cn *conn, j host.Joined) {
	s := srv.s
	var cmds []Command
	for _, c := range s.CommandsFor(host.Both) {
		cmds = append(cmds, Command{Name: c.Name, Description: c.Description, ArgHint: c.ArgHint, Where: c.Where,
			Custom: c.Custom() && !c.MCP(), MCP: c.MCP(), Answers: s.Answers("/"+c.Name, c.Where)})
	}
	cn.send(Message{Type: MsgHello, Hello: &Hello{Session: s.ID(), Root: s.Root(), Log: s.Path(), Title: s.Title(),
		Client: s.Client(), Status: s.Status(), Commands: cmds}})
	err := session.ScanPrefix(s.Path(), j.LogSize, func(r session.Record) error {
		srv.event(cn, host.Event{Kind: host.KindRecord, Record: r})
		return nil
	})
	if err != nil {
		cn.send(Message{Type: MsgEvent, Event: &Event{Kind: EventNotice, Text: "the session's earlier records could not be read: " + err.Error()}})
	}
	cn.send(Message{Type: MsgCaughtUp})
	for _, e := range j.Waiting {
		srv.event(cn, e)
	}
}

// event sends e; a permission or question gets its id, and an ended message
// once it no longer waits.
func (srv *server) event(cn *conn, e host.Event) {
	var id string
	var done <-chan struct{}
	if e.Kind == host.KindPermission || e.Kind == host.KindQuestion {
		id, done = srv.idFor(e)
	}
	w, err := wireEvent(e, id)
	if err != nil {
		cn.send(Message{Type: MsgEvent, Event: &Event{Kind: EventNotice, Text: "an event could not be sent: " + err.Error()}})
		return
	}
	cn.send(Message{Type: MsgEvent, Event: w})
	if done != nil {
		go func() {
			<-done
			cn.send(Message{Type: MsgEnded, ID: id})
		}()
	}
}

// read takes the client's requests until it leaves, each run on its own
// (a submit lasts a turn; an answer to a permission must get through
// meanwhile).
func (srv *server) read(cn *conn) {
	br := bufio.NewReaderSize(cn.c, 64<<10)
	slots := make(chan struct{}, maxRequests)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := readLine(br, MaxRequest)
		if errors.Is(err, errTooLong) {
			cn.send(Message{Type: MsgReply, Error: fmt.Sprintf("a request is at most %d bytes: the connection is closed", MaxRequest)})
			return
		}
		if err != nil {
			return
		}
		r, err := DecodeRequest(line)
		if err != nil {
			cn.send(Message{Type: MsgReply, ID: r.ID, Error: err.Error()})
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			cn.send(Message{Type: MsgReply, ID: r.ID, Error: fmt.Sprintf("too many requests at once (at most %d)", maxRequests)})
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			m := srv.do(r)
			m.Type, m.ID = MsgReply, r.ID
			cn.send(m)
		})
	}
}

// do carries out one request. A client that leaves does not cancel what it
// asked: the turn it started is the session's, which others may be watching.
func (srv *server) do(r Request) Message {
	s := srv.s
	ctx := context.Background()
	from := r.From
	if from == "" {
		from = defaultFrom
	}
	var err error
	switch r.Op {
	case OpSubmit:
		a, err := s.Submit(ctx, r.Input.host())
		if err != nil {
			return Message{Error: userError(err)}
		}
		return Message{OK: true, Answer: &a}
	case OpPermission:
		e, ok := srv.lookup(r.Waiting)
		switch {
		case !ok || e.Permission == nil:
			err = fmt.Errorf("no permission request %s waits (it was answered, or its turn ended)", r.Waiting)
		case !e.Permission.AnswerFrom(decision(r.Decision), from):
			err = errors.New("the request was answered already")
		}
	case OpQuestion:
		e, ok := srv.lookup(r.Waiting)
		switch {
		case !ok || e.Question == nil:
			err = fmt.Errorf("no question %s waits (it was answered, or its turn ended)", r.Waiting)
		case !e.Question.AnswerFrom(*r.Answer, from):
			err = errors.New("the question was answered already")
		}
	case OpCancel:
		s.Cancel()
	case OpMode:
		m, _ := host.ParseMode(r.Mode) // DecodeRequest checked it
		err = s.SetMode(m)
	case OpModel:
		err = s.SetModel(r.Model, r.Thinking)
	case OpRename:
		err = s.Rename(r.Title)
	case OpPoints:
		ps, err := s.Points(ctx)
		if err != nil {
			return Message{Error: userError(err)}
		}
		return Message{OK: true, Points: ps}
	case OpModels:
		return Message{OK: true, Models: s.Models()}
	}
	if err != nil {
		return Message{Error: userError(err)}
	}
	return Message{OK: true}
}

// userError says err in the user's words.
func userError(err error) string {
	switch {
	case errors.Is(err, host.ErrClosed):
		return "the session is closed"
	case errors.Is(err, host.ErrBusy):
		return "the session is busy with another turn"
	}
	return err.Error()
}

var errTooLong = errors.New("line too long")

// readLine reads one line (without its newline) of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(long)+len(chunk) > limit+1 {
			return nil, errTooLong
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
			continue
		case err != nil:
			return nil, err
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		return chunk[:len(chunk)-1], nil
	}
}
