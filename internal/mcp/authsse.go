package mcp

import (
	"net/http"
)

// signed returns a client that signs its requests with sg's token and, when
// the server answers 401 or 403, has sg sign in and sends the request once
// more: what the streamable transport does with its OAuthHandler, for the
// SSE transport, which has no such hook.
func signed(c *http.Client, sg *signer) *http.Client {
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = signTransport{base: base, sg: sg}
	return &cc
}

type signTransport struct {
	base http.RoundTripper
	sg   *signer
}

func (t signTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.send(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return resp, nil // it cannot be sent again: the caller sees the refusal
	}
	if err := t.sg.Authorize(r.Context(), r, resp); err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	_ = resp.Body.Close()
	again := r.Clone(r.Context())
	if r.GetBody != nil {
		if again.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.send(again)
}

// send sends r with the sign-in's token, if there is one yet.
func (t signTransport) send(r *http.Request) (*http.Response, error) {
	ts, err := t.sg.TokenSource(r.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context()) // a RoundTripper leaves its request as it was
		tok.SetAuthHeader(r)
	}
	return t.base.RoundTrip(r)
}
