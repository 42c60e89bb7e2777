package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// maxMessage is the longest line accepted; the SDK refuses longer ones by
// dropping the connection, so they are answered here instead.
const maxMessage = 8 << 20

// Serve runs the agent on a stream pair (stdin and stdout) until the client closes
// its end or ctx is done, then closes every session: turns are cancelled,
// commands and jobs killed, logs closed. Only protocol messages are written to
// out. Malformed messages get a JSON-RPC error and do not end the connection.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	a := New(o)
	w := &lineWriter{w: out, answered: make(chan struct{}, 1)}
	a.w = w
	pr, pw := io.Pipe()
	conn := sdk.NewAgentSideConnection(a, w, pr)
	conn.SetLogger(a.o.Logger)
	a.setPeer(notifier{conn: conn, w: writerFunc(w.writeNotification)})
	go func() { pw.CloseWithError(filter(in, pw, w)) }()
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	err := a.Close()
	// A client may send its last request and close its end at once; what it
	// asked before closing is still answered (closing the sessions has ended any
	// running prompt), for at most a second.
	w.drain(time.Second)
	return err
}

// lineWriter serialises whole messages from the SDK and from filter, and counts
// the client's requests that are still unanswered. The count has its own lock:
// a write that blocks (a client that stopped reading) must not hold up drain,
// which bounds how long dsh waits on its way out.
type lineWriter struct {
	wmu      sync.Mutex // held while writing
	w        io.Writer
	mu       sync.Mutex // guards pending
	pending  int
	answered chan struct{}
	hooks    []hook
}

// hook runs fn once a response holding match has been written: what a client
// may only be told about a session once it knows the session's id.
type hook struct {
	match []byte
	fn    func()
}

// afterResponse runs fn (on its own goroutine) once a response holding match
// has been written.
func (l *lineWriter) afterResponse(match string, fn func()) {
	l.mu.Lock()
	l.hooks = append(l.hooks, hook{[]byte(match), fn})
	l.mu.Unlock()
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	n, err := l.w.Write(p)
	if err == nil && isResponse(p) {
		l.mu.Lock()
		if l.pending > 0 {
			l.pending--
			select {
			case l.answered <- struct{}{}:
			default:
			}
		}
		for i := 0; i < len(l.hooks); i++ {
			if h := l.hooks[i]; bytes.Contains(p, h.match) {
				l.hooks = append(l.hooks[:i], l.hooks[i+1:]...)
				i--
				go h.fn()
			}
		}
		l.mu.Unlock()
	}
	return n, err
}

// writeNotification writes a notification, which answers nothing.
func (l *lineWriter) writeNotification(p []byte) (int, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.w.Write(p)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// asked notes a request from the client that the SDK will answer.
func (l *lineWriter) asked() {
	l.mu.Lock()
	l.pending++
	l.mu.Unlock()
}

// drain waits until every request has been answered, or for at most d.
func (l *lineWriter) drain(d time.Duration) {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		n := l.pending
		l.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-l.answered:
		case <-deadline:
			return
		}
	}
}

// isResponse reports whether msg is a JSON-RPC response: an object with an id
// and no method. Only the top-level keys are read.
func isResponse(msg []byte) bool {
	d := jsontext.NewDecoder(bytes.NewReader(msg))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	hasID := false
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return false
		}
		switch k.String() {
		case "method":
			return false
		case "id":
			hasID = true
		}
		if err := d.SkipValue(); err != nil {
			return false
		}
	}
	return hasID
}

// isRequest reports whether a valid message is a request (it has a method and an id).
func isRequest(msg []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method != "" && m.ID != nil
}

// filter copies the messages of in that are JSON-RPC requests, notifications or
// responses to the SDK through sdkIn, and answers everything else on out: the SDK
// itself would only log them, leaving the client without an answer.
func filter(in io.Reader, sdkIn io.Writer, out *lineWriter) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if reply := check(line, tooLong); reply != nil {
				if _, werr := out.Write(reply); werr != nil {
					return werr
				}
			} else {
				if isRequest(line) {
					out.asked()
				}
				if _, werr := sdkIn.Write(append(line, '\n')); werr != nil {
					return werr
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

// check returns the error response for a line that is not a JSON-RPC 2.0
// message, or nil for one that is.
func check(line []byte, tooLong bool) []byte {
	if tooLong {
		return errorReply(nil, sdk.NewParseError(map[string]any{"error": "message longer than 8 MiB"}))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		if !json.Valid(line) {
			return errorReply(nil, sdk.NewParseError(map[string]any{"error": err.Error()}))
		}
		return errorReply(nil, sdk.NewInvalidRequest(map[string]any{"error": "a message must be a JSON object"}))
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return errorReply(nil, sdk.NewInvalidRequest(map[string]any{"error": "id must be a string, a number or null"}))
	}
	if !hasID {
		id = nil
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return reject(id, `"jsonrpc" must be "2.0"`)
	}
	if raw, ok := m["method"]; ok {
		var method string
		if json.Unmarshal(raw, &method) != nil || method == "" {
			return reject(id, `"method" must be a non-empty string`)
		}
		if p, ok := m["params"]; ok && !bytes.HasPrefix(bytes.TrimSpace(p), []byte("{")) && !bytes.HasPrefix(bytes.TrimSpace(p), []byte("[")) {
			return reject(id, `"params" must be an object or an array`)
		}
		return nil
	}
	_, isResult := m["result"]
	_, isError := m["error"]
	if hasID && (isResult || isError) {
		return nil // a response to one of our requests
	}
	return reject(id, `a message needs a "method", or an "id" with a "result" or an "error"`)
}

// reject answers a malformed message, with its id if it had a usable one.
func reject(id json.RawMessage, why string) []byte {
	return errorReply(id, sdk.NewInvalidRequest(map[string]any{"error": why}))
}

func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string, float64:
		return true
	}
	return false
}

func errorReply(id json.RawMessage, e *sdk.RequestError) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Error   *sdk.RequestError `json:"error"`
	}{"2.0", id, e})
	if err != nil { // a RequestError of strings and maps always encodes
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	return append(b, '\n')
}
