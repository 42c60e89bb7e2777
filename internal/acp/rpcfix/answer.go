package rpcfix

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// AnswerFirst has the connection offer each request for method to fn before
// the SDK: fn returns the response's result, or ok false to leave the
// request to the SDK. It must be called before Start. dsh answers initialize
// so: the SDK's decoding and encoding of it reflect on every type under them.
func (c *Conn) AnswerFirst(method string, fn func(params jsontext.Value) (result []byte, ok bool)) {
	if c.first == nil {
		c.first = map[string]func(jsontext.Value) ([]byte, bool){}
	}
	c.first[method] = fn
}

// answerFirst answers a request with id and method by the function
// AnswerFirst gave, and reports whether it did.
func (c *Conn) answerFirst(line []byte, id jsontext.Value, method string) (bool, error) {
	fn := c.first[method]
	if fn == nil {
		return false, nil
	}
	result, ok := fn(params(line))
	if !ok {
		return false, nil
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}\n")
	_, err := c.Write(b.Bytes())
	return true, err
}

// params is a request's params, nil when it has none.
func params(msg []byte) jsontext.Value {
	d := jsontext.NewDecoder(bytes.NewReader(msg))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return nil
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadToken()
		if err != nil {
			return nil
		}
		key := k.String() // before the token is overwritten
		v, err := d.ReadValue()
		if err != nil {
			return nil
		}
		if key == "params" {
			return v.Clone()
		}
	}
	return nil
}
