package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/dsh-dev/dsh/internal/credentials"
	"github.com/dsh-dev/dsh/internal/mcp/mcptest"
)

func newOAuthServer(t *testing.T) *mcptest.OAuthServer { return mcptest.NewOAuthServer(t, testServer) }

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
	if n := srv.Hit("/register"); n != 0 {
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
	if challenge, resource := srv.Authorization(); challenge == "" || resource != cfg.URL {
		t.Errorf("authorization: PKCE challenge %q, resource %q; want a challenge and %s", challenge, resource, cfg.URL)
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
	if n := srv.Hit("/authorize"); n != 1 {
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
	if _, resource := srv.Authorization(); len(shown) != 1 || !strings.HasPrefix(shown[0], "old "+srv.URL+"/authorize?") || resource != cfg.URL {
		t.Errorf("links shown = %q, resource %q", shown, resource)
	}
	s := start(t, []ServerConfig{cfg}, Options{Tokens: store})
	if r := run(t, find(t, s, "mcp__old__greet"), `{"name":"sse"}`); r.IsError || r.TextOf() != "Hello, sse!" {
		t.Errorf("greet over SSE = %+v", r)
	}
	_ = s.Close()
	if n := srv.Hit("/authorize"); n != 1 {
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
