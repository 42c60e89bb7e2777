package acp

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
)

// newSessionFast takes session/new from the SDK as initializeFast takes
// initialize: it reads the request without reflection, runs NewSession — the
// same session — and writes the SDK's bytes of its answer
// (TestNewSessionFastIsTheSDKs). A request of a shape it does not know goes
// to the SDK.
func (a *Agent) newSessionFast(params jsontext.Value) (answer func() ([]byte, error), ok bool) {
	p, ok := newSessionParams(params)
	if !ok {
		return nil, false
	}
	return func() ([]byte, error) {
		resp, err := a.NewSession(context.Background(), p) // it reads no context: the SDK's went unused
		if err != nil {
			return nil, err
		}
		return encodeNewSession(resp)
	}, true
}

// encodeNewSession is session/new's result as the SDK encodes it.
func encodeNewSession(resp sdk.NewSessionResponse) ([]byte, error) {
	if b, ok := rpcfix.AppendNewSession(make([]byte, 0, 8<<10), resp); ok {
		return b, nil
	}
	return stdjson.Marshal(resp)
}

// newSessionParams reads session/new's params when they have only the members
// the SDK decodes, of the types it takes without complaint, and pass its
// Validate; ok is false otherwise. Its servers are decoded the SDK's way.
func newSessionParams(params jsontext.Value) (p sdk.NewSessionRequest, ok bool) {
	d := jsontext.NewDecoder(bytes.NewReader(params))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return p, false
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return p, false
		}
		key := k.String()
		v, err := d.ReadValue()
		if err != nil {
			return p, false
		}
		switch {
		case key == "cwd" && v.Kind() == '"':
			if json.Unmarshal(v, &p.Cwd) != nil {
				return p, false
			}
		case key == "mcpServers" && string(v) == "[]":
			p.McpServers = []sdk.McpServer{}
		case key == "mcpServers" && v.Kind() == '[':
			if stdjson.Unmarshal(v, &p.McpServers) != nil {
				return p, false
			}
		case key == "additionalDirectories" && v.Kind() == '[':
			p.AdditionalDirectories = []string{}
			if json.Unmarshal(v, &p.AdditionalDirectories) != nil {
				return p, false
			}
		case key == "_meta" && v.Kind() == '{':
			if json.Unmarshal(v, &p.Meta) != nil {
				return p, false
			}
		default:
			return p, false
		}
	}
	if t, err := d.ReadToken(); err != nil || t.Kind() != '}' {
		return p, false
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) || p.Validate() != nil {
		return p, false // more after the object, or what the SDK refuses
	}
	return p, true
}
