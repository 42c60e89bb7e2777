package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/dsh-dev/dsh/internal/credentials"
)

// oauthServer is a local MCP server behind a local OAuth authorization
// server that approves every sign-in at once.
type oauthServer struct {
	*httptest.Server
	mu        sync.Mutex
	hits      map[string]int // requests per path
	challenge string         // the PKCE challenge of the last authorization
	resource  string         // its resource indicator
	tokens    map[string]bool
	n         int
}

func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	o := &oauthServer{hits: map[string]int{}, tokens: map[string]bool{}}
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
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp"})(mcpHandler))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/mcp", AuthorizationServers: []string{base}, ScopesSupported: []string{"tools"}}))
	// The same server over SSE (its POSTs go to /sse?sessionid=…).
	sseHandler := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return testServer() }, nil)
	mux.Handle("/sse", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/sse"})(sseHandler))
	mux.Handle("/.well-known/oauth-protected-resource/sse", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/sse", AuthorizationServers: []string{base}, ScopesSupported: []string{"tools"}}))
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
		tok := "access-" + string(rune('0'+o.n))
		o.tokens[tok] = true
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
			"refresh_token": "the-refresh"})
	})
	return o
}

func (o *oauthServer) hit(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits[path]
}

// TestSignIn signs in to a local OAuth server as a user would, keeps the
// sign-in in a private file, and uses it (refreshed) in the sessions after.
func TestSignIn(t *testing.T) {
	srv := newOAuthServer(t)
	store := &credentials.MCPTokens{Path: filepath.Join(t.TempDir(), "dsh", "mcp-tokens.json")}
	cfg := ServerConfig{Name: "remote", Type: "http", URL: srv.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// No one to sign in and nothing kept: the server needs a sign-in, told at
	// once, without registering dsh anywhere.
	_, err := Start(ctx, []ServerConfig{cfg}, Options{Tokens: store})
	if !errors.Is(err, ErrNeedsSignIn) {
		t.Fatalf("start without a sign-in = %v, want ErrNeedsSignIn", err)
	}
	if n := srv.hit("/register"); n != 0 {
		t.Errorf("registered %d times without anyone to sign in", n)
	}

	var shown []string
	asked, err := Login(ctx, cfg, Options{Tokens: store, SignIn: func(server, link string) {
		shown = append(shown, server+" "+link)
		approve(server, link)
	}})
	if err != nil || !asked {
		t.Fatalf("Login = %v, %v", asked, err)
	}
	if len(shown) != 1 || !strings.HasPrefix(shown[0], "remote "+srv.URL+"/authorize?") {
		t.Errorf("links shown = %q", shown)
	}
	if srv.challenge == "" || srv.resource != cfg.URL {
		t.Errorf("authorization: PKCE challenge %q, resource %q; want a challenge and %s", srv.challenge, srv.resource, cfg.URL)
	}
	fi, err := os.Stat(store.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept sign-in: %v, mode %v; want 0600", err, fi)
	}

	// The next session uses it, without a link.
	s := start(t, []ServerConfig{cfg}, Options{Tokens: store})
	if r := run(t, find(t, s, "mcp__remote__greet"), `{"name":"dsh"}`); r.IsError || r.TextOf() != "Hello, dsh!" {
		t.Errorf("greet = %+v", r)
	}
	_ = s.Close()
	if n := srv.hit("/authorize"); n != 1 {
		t.Errorf("%d authorizations, want the one sign-in", n)
	}

	// An expired token is refreshed, and the new one kept.
	b, _ := store.Load(tokenKey(cfg))
	var in signIn
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	in.Token.Expiry = time.Now().Add(-time.Hour)
	b, _ = json.Marshal(in)
	if err := store.Save(tokenKey(cfg), b); err != nil {
		t.Fatal(err)
	}
	s = start(t, []ServerConfig{cfg}, Options{Tokens: store})
	if r := run(t, find(t, s, "mcp__remote__greet"), `{"name":"again"}`); r.IsError {
		t.Errorf("greet after a refresh = %+v", r)
	}
	_ = s.Close()
	b, _ = store.Load(tokenKey(cfg))
	if err := json.Unmarshal(b, &in); err != nil || in.Token.AccessToken != "access-2" || !in.Token.Valid() {
		t.Errorf("kept after the refresh: %+v, %v; want access-2", in.Token, err)
	}

	// A sign-in is for its server's URL only: the same name elsewhere has none.
	other := cfg
	other.URL = srv.URL + "/mcp?elsewhere"
	if _, err := Start(ctx, []ServerConfig{other}, Options{Tokens: store}); !errors.Is(err, ErrNeedsSignIn) {
		t.Errorf("another URL under the same name = %v, want ErrNeedsSignIn", err)
	}

	if err := SignOut(cfg, store); err != nil {
		t.Fatal(err)
	}
	if _, err := Start(ctx, []ServerConfig{cfg}, Options{Tokens: store}); !errors.Is(err, ErrNeedsSignIn) {
		t.Errorf("after signing out = %v, want ErrNeedsSignIn", err)
	}
}

// TestSignInSSE: a server over SSE signs in as one over streamable HTTP
// does, though the SDK's SSE transport has no OAuth hook: the transport's
// HTTP client signs its requests and starts the sign-in on a 401.
func TestSignInSSE(t *testing.T) {
	srv := newOAuthServer(t)
	store := &credentials.MCPTokens{Path: filepath.Join(t.TempDir(), "dsh", "mcp-tokens.json")}
	cfg := ServerConfig{Name: "old", Type: "sse", URL: srv.URL + "/sse"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := Start(ctx, []ServerConfig{cfg}, Options{Tokens: store}); !errors.Is(err, ErrNeedsSignIn) {
		t.Fatalf("start without a sign-in = %v, want ErrNeedsSignIn", err)
	}
	var shown []string
	asked, err := Login(ctx, cfg, Options{Tokens: store, SignIn: func(server, link string) {
		shown = append(shown, server+" "+link)
		approve(server, link)
	}})
	if err != nil || !asked {
		t.Fatalf("Login = %v, %v", asked, err)
	}
	if len(shown) != 1 || !strings.HasPrefix(shown[0], "old "+srv.URL+"/authorize?") || srv.resource != cfg.URL {
		t.Errorf("links shown = %q, resource %q", shown, srv.resource)
	}
	s := start(t, []ServerConfig{cfg}, Options{Tokens: store})
	if r := run(t, find(t, s, "mcp__old__greet"), `{"name":"sse"}`); r.IsError || r.TextOf() != "Hello, sse!" {
		t.Errorf("greet over SSE = %+v", r)
	}
	_ = s.Close()
	if n := srv.hit("/authorize"); n != 1 {
		t.Errorf("%d authorizations, want the one sign-in", n)
	}
}

// TestSignInRefused: a user who refuses at the authorization server ends the
// sign-in with the server's reason.
func TestSignInRefused(t *testing.T) {
	srv := newOAuthServer(t)
	cfg := ServerConfig{Name: "remote", Type: "http", URL: srv.URL + "/mcp"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Login(ctx, cfg, Options{SignIn: func(_, link string) {
		u, _ := url.Parse(link)
		back := u.Query().Get("redirect_uri") + "?error=access_denied&error_description=no+%1b[31mthanks"
		go func() {
			if resp, err := http.Get(back); err == nil {
				_ = resp.Body.Close()
			}
		}()
	}})
	if err == nil || !strings.Contains(err.Error(), "access_denied no thanks") {
		t.Errorf("refused sign-in = %v, want the reason, escapes removed", err)
	}
}

var _ oauth2.TokenSource = (*keeping)(nil)
