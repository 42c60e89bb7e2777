// Package mcptest is a local MCP server behind a local OAuth authorization
// server, on loopback, for the tests of every package that signs in to one
// (mcp, host, and the consumers' end-to-end tests).
package mcptest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuthServer serves the MCP server that newServer makes at /mcp
// (streamable HTTP) and /sse (SSE), each of which wants a bearer token, and
// the authorization server that hands them out: it approves every sign-in
// at once, so following the link, as a browser does, signs in.
type OAuthServer struct {
	*httptest.Server
	mu        sync.Mutex
	hits      map[string]int // requests per path
	challenge string         // the PKCE challenge of the last authorization
	resource  string         // its resource indicator
	tokens    map[string]bool
	n         int
}

// NewOAuthServer starts one, closed when the test ends.
func NewOAuthServer(t testing.TB, newServer func() *sdk.Server) *OAuthServer {
	t.Helper()
	o := &OAuthServer{hits: map[string]int{}, tokens: map[string]bool{}}
	mux := http.NewServeMux()
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits[r.URL.Path]++
		o.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(o.Close)
	base := o.URL
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if !o.tokens[tok] {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	get := func(*http.Request) *sdk.Server { return newServer() }
	for path, h := range map[string]http.Handler{
		"/mcp": sdk.NewStreamableHTTPHandler(get, nil),
		"/sse": sdk.NewSSEHandler(get, nil), // its POSTs go to /sse?sessionid=…
	} {
		meta := "/.well-known/oauth-protected-resource" + path
		mux.Handle(path, auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + meta})(h))
		mux.Handle(meta, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: base + path, AuthorizationServers: []string{base}, ScopesSupported: []string{"tools"}}))
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": base, "authorization_endpoint": base + "/authorize",
			"token_endpoint": base + "/token", "registration_endpoint": base + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "dsh-client", "redirect_uris": m["redirect_uris"],
			"token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		o.challenge, o.resource = q.Get("code_challenge"), q.Get("resource")
		o.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"the-code"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if r.Form.Get("code") != "the-code" || base64.RawURLEncoding.EncodeToString(sum[:]) != o.challenge {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
		case "refresh_token":
			if r.Form.Get("refresh_token") != "the-refresh" {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
		}
		o.n++
		tok := "access-" + strconv.Itoa(o.n)
		o.tokens[tok] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
			"refresh_token": "the-refresh"})
	})
	return o
}

// Hit is how many requests path had.
func (o *OAuthServer) Hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// Authorization is the last authorization's PKCE challenge and resource
// indicator.
func (o *OAuthServer) Authorization() (challenge, resource string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.challenge, o.resource
}

// Follow opens a sign-in link as the user's browser would, following the
// redirect back to dsh's loopback listener, and returns the page it ends on.
func Follow(link string) (string, error) {
	resp, err := http.Get(link) //nolint:gosec // a test's loopback server
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var b [4096]byte
	n, _ := resp.Body.Read(b[:])
	return string(b[:n]), nil
}
