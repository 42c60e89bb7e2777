// Package rpcfix stands between an ACP connection's stream pair and the ACP
// SDK, for what the SDK does not do well enough: it answers malformed lines
// (the SDK only logs them, leaving the client without an answer), encodes
// session/update notifications in one pass (the SDK encodes every union three
// times), lets a replay's notifications leave in batches instead of one write
// each, and tells its owner when a response has been written, so that what a
// client may only hear after a response (a new session's commands) comes after.
package rpcfix

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// Response is a response the SDK wrote: the method of the request it answers,
// and its result (nil for an error).
type Response struct {
	Method string
	Result jsontext.Value
}

// Conn is one connection's JSON-RPC layer. The SDK reads from Reader and
// writes to Conn; dsh writes its notifications with Notify and Buffer.
type Conn struct {
	in     io.Reader
	sdkIn  *io.PipeReader
	sdkOut *io.PipeWriter

	wmu sync.Mutex // held while writing
	w   *bufio.Writer
	// line is where a notification is encoded (under wmu), kept between the
	// updates of a replay; one grown past keepLine is let go once they are written.
	line bytes.Buffer

	// The requests still unanswered have their own lock: a write that blocks (a
	// client that stopped reading) must not hold up Drain, which bounds how long
	// dsh waits on its way out.
	mu       sync.Mutex
	pending  map[string][]string // request id → the methods of the requests waiting with it, in order
	answered chan struct{}
	written  func(Response)

	onCancel func(id string)
	lastCall int                       // the last of dsh's own request ids (Call)
	calls    map[string]chan callReply // dsh's own requests waiting, by id
	gone     chan struct{}             // closed when the client's stream ends

	// beforeSDK, if set, runs once before the first message goes to the SDK
	// (BeforeSDK).
	beforeSDK func()
	sdkOnce   sync.Once

	// first are AnswerFirst's and AnswerLater's functions, by method; now
	// are the methods answered before the next message is read (AnswerFirst's).
	first map[string]func(jsontext.Value) (func() ([]byte, error), bool)
	now   map[string]bool
}

// batchSize is how much of a replay may wait before it is written.
const batchSize = 64 << 10

// keepLine is the largest encoding buffer a connection keeps when idle.
const keepLine = 256 << 10

// New returns the layer over in and out; Start starts reading in. written, if
// not nil, is called on its own goroutine once each response to a client's
// request has been written.
func New(in io.Reader, out io.Writer, written func(Response)) *Conn {
	growPipe(out)
	pr, pw := io.Pipe()
	c := &Conn{sdkIn: pr, sdkOut: pw, in: in, w: bufio.NewWriterSize(out, batchSize), pending: map[string][]string{},
		answered: make(chan struct{}, 1), written: written, calls: map[string]chan callReply{}, gone: make(chan struct{})}
	return c
}

// Start reads the client's messages, once the SDK is set up to take them:
// it must not see the end of its input before then.
func (c *Conn) Start() {
	go func() {
		err := c.filter(c.in, c.sdkOut)
		close(c.gone)
		c.sdkOut.CloseWithError(err)
	}()
}

// Reader is what the SDK reads: the client's well-formed messages.
func (c *Conn) Reader() io.Reader { return c.sdkIn }

// BeforeSDK has the connection run fn once, before the first message that goes
// to the SDK (one no AnswerFirst or AnswerLater function took): fn sets the
// SDK up on Reader then rather than before any message needs it (its read
// buffer alone is a MiB). It must be called before Start.
func (c *Conn) BeforeSDK(fn func()) { c.beforeSDK = fn }

// Gone is closed once the client's stream has ended and everything read from
// it has been handed on.
func (c *Conn) Gone() <-chan struct{} { return c.gone }

// Write writes one whole message of the SDK's, and anything buffered before it.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	n, err := c.w.Write(p)
	if err == nil {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if id, result, ok := response(p); ok {
		if err == nil {
			c.answer(id, result, "")
		} else {
			// The client never gets it: nothing waits for it any more (Drain
			// would wait its whole time at exit), and nobody is told it was written.
			c.unpend(idKey(id), "")
			c.signal()
		}
	}
	return n, err
}

// answer notes that a request with id has been answered. A client may reuse
// an id before its answer, so each id keeps the methods of its requests
// waiting, in order: method is the request's when the answer is the layer's
// own, which knows it even if an answer of the SDK's to the same id took its
// note; "" takes the first noted.
func (c *Conn) answer(id, result jsontext.Value, method string) {
	method, noted := c.unpend(idKey(id), method)
	if !noted && method == "" {
		return
	}
	c.signal()
	if c.written != nil {
		go c.written(Response{Method: method, Result: result})
	}
}

// unpend takes the note of a request with the key's id and method ("": the
// first noted) off the requests waiting; it returns the method, and whether
// one was noted.
func (c *Conn) unpend(key, method string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	waiting := c.pending[key]
	if len(waiting) == 0 {
		return method, false
	}
	i := max(slices.Index(waiting, method), 0)
	if method == "" {
		method = waiting[i]
	}
	if len(waiting) == 1 {
		delete(c.pending, key)
	} else {
		c.pending[key] = slices.Delete(waiting, i, i+1)
	}
	return method, true
}

// signal wakes Drain to count the requests waiting again.
func (c *Conn) signal() {
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// Notify writes a session/update notification now.
func (c *Conn) Notify(note sdk.SessionNotification) error {
	return c.notify(note, true)
}

// Buffer writes a notification that may wait for those that follow it (a
// replay): it leaves when the buffer fills, with the next message written, or
// on Flush.
func (c *Conn) Buffer(note sdk.SessionNotification) error {
	return c.notify(note, false)
}

func (c *Conn) notify(note sdk.SessionNotification, flush bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.line.Reset()
	if n := textSize(note.Update) + 4<<10; n > keepLine && n > c.line.Cap() {
		// Sized once rather than doubled as the encoder fills it, which would
		// leave twice a large update's size behind; the encoder wants a quarter
		// of what it wrote still free after each flush.
		c.line = bytes.Buffer{}
		c.line.Grow(n + n/3)
	}
	if err := appendNotification(&c.line, note); err != nil {
		return err
	}
	if _, err := c.w.Write(c.line.Bytes()); err != nil {
		return err
	}
	if flush {
		return c.flush()
	}
	return nil
}

// Flush writes what Buffer left waiting.
func (c *Conn) Flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flush()
}

// flush writes what waits and lets go of a large encoding buffer. The caller
// holds wmu.
func (c *Conn) flush() error {
	if c.line.Cap() > keepLine {
		c.line = bytes.Buffer{}
	}
	return c.w.Flush()
}

// Drain waits until every request has been answered, or for at most d.
func (c *Conn) Drain(d time.Duration) {
	deadline := time.After(d)
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-deadline:
			return
		}
	}
}

// filter copies the messages of in that are JSON-RPC requests, notifications or
// responses to the SDK through sdkIn, and answers everything else itself.
func (c *Conn) filter(in io.Reader, sdkIn io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if reply := check(line, tooLong); reply != nil {
				if _, werr := c.Write(reply); werr != nil {
					return werr
				}
			} else if !c.ownReply(line) {
				answered := false
				if id, method, ok := request(line); ok {
					c.mu.Lock()
					key := idKey(id)
					c.pending[key] = append(c.pending[key], method)
					c.mu.Unlock()
					var werr error
					if answered, werr = c.answerFirst(line, method); werr != nil {
						return werr
					}
					if method == sdk.AgentMethodSessionPrompt {
						line = tagPrompt(line, id)
					}
				} else if bytes.Contains(line, []byte(`"$/cancel_request"`)) {
					c.cancelRequest(line)
				}
				if !answered {
					if c.beforeSDK != nil {
						c.sdkOnce.Do(c.beforeSDK)
					}
					if _, werr := sdkIn.Write(append(line, '\n')); werr != nil {
						return werr
					}
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// idKey is a request id in one spelling, the client's and the SDK's alike.
func idKey(id jsontext.Value) string {
	v := id.Clone()
	if v.Canonicalize() != nil {
		return string(id)
	}
	return string(v)
}

// readLine reads one line without its newline; a line longer than maxMessage is
// read to its end and reported as too long.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxMessage {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}
