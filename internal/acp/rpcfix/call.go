package rpcfix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// What the SDK lacks of request cancellation and of the requests it cannot
// make: ACP's $/cancel_request names a request by its JSON-RPC id, which the
// SDK's handlers never see, and the SDK's elicitation/create has no session
// scope (schema 1.21.0 requires one).

// RequestIDMeta is the _meta key under which a session/prompt request's params
// carry its JSON-RPC id (in one spelling, see OnCancel) to the agent: the layer
// adds it as the request passes to the SDK.
const RequestIDMeta = "dsh.dev/requestId"

// OnCancel sets what is called, on the reading goroutine, when the client
// sends $/cancel_request naming one of its session/prompt requests still
// unanswered: its id as RequestIDMeta spells it. It may come before the
// agent's handler has the request. Set it before Start.
func (c *Conn) OnCancel(fn func(id string)) { c.onCancel = fn }

// cancelRequest handles a $/cancel_request line.
func (c *Conn) cancelRequest(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID jsontext.Value `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.ID != nil || m.Method != "$/cancel_request" || len(m.Params.RequestID) == 0 || c.onCancel == nil {
		return
	}
	key := idKey(m.Params.RequestID)
	c.mu.Lock()
	prompt := slices.Contains(c.pending[key], sdk.AgentMethodSessionPrompt)
	c.mu.Unlock()
	if prompt {
		c.onCancel(key)
	}
}

// tagPrompt adds the request's id to a session/prompt request's params._meta.
func tagPrompt(line []byte, id jsontext.Value) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return line // the SDK answers it invalid
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	key, _ := json.Marshal(idKey(id)) // a string always encodes
	meta[RequestIDMeta] = key
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return line
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return line
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return out
}

// callPrefix starts the ids of dsh's own requests: strings, where the SDK's
// are numbers, so the two never meet.
const callPrefix = "dsh-"

// callReply is the response to one of dsh's own requests.
type callReply struct {
	result jsontext.Value
	err    error
}

// Call sends the client a request the SDK cannot make and waits for its
// response. When ctx ends first the request is cancelled with
// $/cancel_request, and Call returns ctx's error.
func (c *Conn) Call(ctx context.Context, method string, params any) (jsontext.Value, error) {
	c.mu.Lock()
	c.lastCall++
	id := callPrefix + strconv.Itoa(c.lastCall)
	ch := make(chan callReply, 1)
	c.calls[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	if err := c.writeLine(msg); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		cancel := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%q}}`, id)
		_ = c.writeLine(cancel) // a client gone needs no cancel
		return nil, ctx.Err()
	case <-c.gone:
		return nil, errors.New("the client is gone")
	}
}

func (c *Conn) writeLine(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(msg, '\n')); err != nil {
		return err
	}
	return c.flush()
}

// ownReply delivers a response to one of dsh's own requests, and reports
// whether the line was one.
func (c *Conn) ownReply(line []byte) bool {
	id, _, ok := response(line)
	if !ok || !bytes.HasPrefix(id, []byte(`"`+callPrefix)) {
		return false
	}
	var key string
	if json.Unmarshal(id, &key) != nil || !strings.HasPrefix(key, callPrefix) {
		return false
	}
	var m struct {
		Result jsontext.Value    `json:"result"`
		Error  *sdk.RequestError `json:"error"`
	}
	r := callReply{}
	if err := json.Unmarshal(line, &m); err != nil {
		r.err = err
	} else if m.Error != nil {
		r.err = m.Error
	} else {
		r.result = m.Result
	}
	c.mu.Lock()
	ch := c.calls[key]
	delete(c.calls, key) // a second answer finds no call
	c.mu.Unlock()
	if ch != nil {
		ch <- r // buffered
	}
	return true
}
