package rpcfix

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// AnswerFirst has the connection offer each request for method to fn before
// the SDK: fn returns the response's result, or ok false to leave the
// request to the SDK. It must be called before Start. dsh answers initialize
// so: the SDK's decoding and encoding of it reflect on every type under them.
func (c *Conn) AnswerFirst(method string, fn func(params jsontext.Value) (result []byte, ok bool)) {
	c.AnswerLater(method, func(params jsontext.Value) (func() ([]byte, error), bool) {
		result, ok := fn(params)
		return func() ([]byte, error) { return result, nil }, ok
	})
	c.now[method] = true
}

// AnswerLater is AnswerFirst for a request that takes a while to answer (a new
// session): fn says at once whether it takes the request (ok false leaves it
// to the SDK), and answer, run on a goroutine of its own as the SDK runs a
// request, returns the response's result or its error, which is sent as the
// SDK sends a handler's error. It must be called before Start.
func (c *Conn) AnswerLater(method string, fn func(params jsontext.Value) (answer func() ([]byte, error), ok bool)) {
	if c.first == nil {
		c.first = map[string]func(jsontext.Value) (func() ([]byte, error), bool){}
		c.now = map[string]bool{}
	}
	c.first[method] = fn
}

// answerFirst answers a request for method by the function
// AnswerFirst or AnswerLater gave, and reports whether it does.
func (c *Conn) answerFirst(line []byte, method string) (bool, error) {
	fn := c.first[method]
	if fn == nil {
		return false, nil
	}
	id, params, ok := firstRequest(line, method)
	if !ok {
		return false, nil
	}
	answer, ok := fn(params)
	if !ok {
		return false, nil
	}
	if c.now[method] {
		result, _ := answer() // AnswerFirst's never fail
		return true, c.writeAnswer(id, method, result, nil)
	}
	go func() {
		result, err := answer()
		// A write that fails is the connection's end, which the reader sees.
		_ = c.writeAnswer(id, method, result, err)
	}()
	return true, nil
}

// writeAnswer writes the response to request id as the SDK writes it (the id
// as encoding/json writes raw JSON: HTML-escaped) and notes that it has been
// answered, without reading the line back as Write does.
func (c *Conn) writeAnswer(id jsontext.Value, method string, result []byte, err error) error {
	var b bytes.Buffer
	if err != nil {
		b.Write(errorReply(stdjson.RawMessage(id), requestError(err)))
		result = nil
	} else {
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		stdjson.HTMLEscape(&b, id)
		b.WriteString(`,"result":`)
		b.Write(result)
		b.WriteString("}\n")
	}
	c.wmu.Lock()
	_, werr := c.w.Write(b.Bytes())
	if werr == nil {
		werr = c.w.Flush()
	}
	c.wmu.Unlock()
	if werr == nil {
		c.answer(id, result, method)
	}
	return werr
}

// requestError is the error the SDK answers a handler's err with.
func requestError(err error) *sdk.RequestError {
	if re, ok := err.(*sdk.RequestError); ok { //nolint:errorlint // as the SDK's toReqErr: one that wraps it is an internal error
		return re
	}
	if errors.Is(err, context.Canceled) {
		return sdk.NewRequestCancelled(map[string]any{"error": err.Error()})
	}
	return sdk.NewInternalError(map[string]any{"error": err.Error()})
}

// sdkMessage is a message as the SDK reads it (its anyMessage).
type sdkMessage struct {
	JSONRPC string              `json:"jsonrpc"`
	ID      *stdjson.RawMessage `json:"id,omitempty"`
	Method  string              `json:"method,omitempty"`
	Params  stdjson.RawMessage  `json:"params,omitempty"`
	Result  stdjson.RawMessage  `json:"result,omitempty"`
	Error   *sdk.RequestError   `json:"error,omitempty"`
}

// firstRequest is request line's id and params as the SDK reads them, so that
// an answer before it answers what it would have: its decoding takes the
// last of repeated members and matches names in any case, reads an id of
// null as none (a notification, never answered) and drops a line with a
// member of the wrong type. ok is false for a line it would not read as a
// request for method.
func firstRequest(line []byte, method string) (id, params jsontext.Value, ok bool) {
	var m sdkMessage
	if stdjson.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != method {
		return nil, nil, false
	}
	return jsontext.Value(*m.ID), jsontext.Value(m.Params), true
}
