package rpcfix

import (
	"bytes"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
)

// maxMessage is the longest line accepted; the SDK refuses longer ones by
// dropping the connection, so they are answered here instead.
const maxMessage = 8 << 20

// response reports whether msg is a JSON-RPC response — an object with an id
// and no method — with its id and result. Only the top-level keys are read.
func response(msg []byte) (id, result jsontext.Value, ok bool) {
	d := jsontext.NewDecoder(bytes.NewReader(msg))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return nil, nil, false
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return nil, nil, false
		}
		key := k.String() // before the token is overwritten
		v, err := d.ReadValue()
		if err != nil {
			return nil, nil, false
		}
		switch key {
		case "method":
			return nil, nil, false
		case "id":
			id = v.Clone()
		case "result":
			result = v.Clone()
		}
	}
	return id, result, id != nil
}

// request reports whether a valid message is a request (it has a method and
// an id), with its id and method.
func request(msg []byte) (jsontext.Value, string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || m.ID == nil {
		return nil, "", false
	}
	return jsontext.Value(m.ID), m.Method, true
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
