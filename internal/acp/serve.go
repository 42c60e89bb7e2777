package acp

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
)

// Serve runs the agent on a stream pair (stdin and stdout) until the client closes
// its end or ctx is done, then closes every session: turns are cancelled,
// commands and jobs killed, logs closed. Only protocol messages are written to
// out. Malformed messages get a JSON-RPC error and do not end the connection.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	a := New(o)
	a.waiting = &announcements{fns: map[string]func(){}}
	rpc := rpcfix.New(in, out, a.waiting.responded)
	rpc.OnCancel(a.cancelRequest)
	rpc.AnswerFirst(sdk.AgentMethodInitialize, a.initializeFast)
	rpc.AnswerLater(sdk.AgentMethodSessionNew, a.newSessionFast)
	// The SDK's connection is made when a message needs it (one the fast
	// paths above do not take, or a request of dsh's own): its MiB of read
	// buffer, made at start, put the process's first collection in its first
	// session/new.
	var once sync.Once
	var made atomic.Pointer[sdk.AgentSideConnection]
	sdkConn := func() *sdk.AgentSideConnection {
		once.Do(func() {
			conn := sdk.NewAgentSideConnection(a, rpc, rpc.Reader())
			conn.SetLogger(a.o.Logger)
			made.Store(conn)
		})
		return made.Load()
	}
	rpc.BeforeSDK(func() { sdkConn() })
	a.setPeer(notifier{conn: sdkConn, rpc: rpc})
	rpc.Start()
	select {
	case <-rpc.Gone():
		if conn := made.Load(); conn != nil {
			select { // it has the last messages: its end follows
			case <-conn.Done():
			case <-ctx.Done():
			}
		}
	case <-ctx.Done():
	}
	err := a.Close()
	// A client may send its last request and close its end at once; what it
	// asked before closing is still answered (closing the sessions has ended any
	// running prompt), for at most a second.
	rpc.Drain(time.Second)
	return err
}

// announcements are what waits for the response to a session/new to be
// written: a client can place a session's updates only once it has its id.
type announcements struct {
	mu  sync.Mutex
	fns map[string]func() // by session id
}

// after runs fn once the response that created session id has been written.
func (w *announcements) after(id string, fn func()) {
	w.mu.Lock()
	w.fns[id] = fn
	w.mu.Unlock()
}

func (w *announcements) responded(r rpcfix.Response) {
	if r.Method != sdk.AgentMethodSessionNew || r.Result == nil {
		return
	}
	id, ok := sessionID(r.Result)
	if !ok {
		return
	}
	w.mu.Lock()
	fn := w.fns[id]
	delete(w.fns, id)
	w.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// sessionID is the sessionId member of session/new's result, read without
// decoding the rest (its config options are most of it).
func sessionID(result jsontext.Value) (string, bool) {
	d := jsontext.NewDecoder(bytes.NewReader(result))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return "", false
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return "", false
		}
		if k.String() != "sessionId" {
			if d.SkipValue() != nil {
				return "", false
			}
			continue
		}
		v, err := d.ReadToken()
		if err != nil || v.Kind() != '"' {
			return "", false
		}
		return v.String(), true
	}
	return "", false
}
