package mcp

// This file bounds one message of a server, whatever carries it: a server
// that answers a listing with one page of 50 MB is cut off at maxMessage,
// not read whole. The SDK bounds a stdio line and a server-sent event when
// asked (MaxLineLength, MaxEventSize); a plain JSON answer over HTTP it reads
// whole, so its body is bounded here, before the SDK reads it.

import (
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxMessage bounds one message from a server: a tool's result with an
// image (5 MB, base64) fits, a listing page that would take the session's
// memory does not.
const maxMessage = 16 << 20

// errTooLarge is a server's message over maxMessage; the SDK keeps only its
// text, which says what happened.
var errTooLarge = fmt.Errorf("the server sent a message larger than %d MiB; dsh stopped reading it", maxMessage>>20)

// bounded returns a client whose answers' bodies end in errTooLarge past
// maxMessage, save an event stream's, whose events the SDK bounds one by one.
func bounded(c *http.Client) *http.Client {
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = boundTransport{base: base}
	return &cc
}

type boundTransport struct{ base http.RoundTripper }

func (t boundTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body = &capped{ReadCloser: resp.Body, left: maxMessage}
	}
	return resp, nil
}

// capped reads a body up to left bytes, and then fails.
type capped struct {
	io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a body that ends here from one that goes on.
		var one [1]byte
		if n, err := c.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}
