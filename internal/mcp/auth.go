package mcp

// This file signs dsh in to HTTP servers that ask for it, as MCP's
// authorization specification has it. The go-sdk's auth packages speak the
// protocol (protected-resource metadata, authorization-server discovery with
// the older fallbacks, client ID metadata documents, pre-registered clients
// and dynamic registration, PKCE, resource indicators, scopes and step-up,
// refresh); dsh supplies the user's side: the link shown to the user, the
// loopback listener the browser returns to, and the tokens kept between
// sessions.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/dsh-dev/dsh/internal/config"
)

// OAuth is a server's sign-in configuration.
type OAuth = config.MCPOAuth

// TokenStore keeps sign-ins between sessions (credentials.MCPTokens): an
// opaque entry per key; a nil value removes one.
type TokenStore interface {
	Load(key string) ([]byte, error)
	Save(key string, value []byte) error
}

// ErrNeedsSignIn is a server that asks for a sign-in that no kept token
// answers, started where no one could sign in.
var ErrNeedsSignIn = errors.New("needs sign-in")

// tokenKey names a server's sign-in: a token is for one server at one URL,
// never sent to another.
func tokenKey(c ServerConfig) string { return c.Name + " " + c.URL }

// signIn is what a sign-in leaves: the token, and what refreshing it needs.
type signIn struct {
	ClientID     string        `json:"client_id"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthURL      string        `json:"auth_url,omitempty"`
	TokenURL     string        `json:"token_url"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

func (s signIn) config() *oauth2.Config {
	return &oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, Scopes: s.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: s.AuthURL, TokenURL: s.TokenURL, AuthStyle: oauth2.AuthStyle(s.AuthStyle)}}
}

// signer is one connection's OAuth handler: the SDK's, with the user's side.
type signer struct {
	server   string
	key      string
	store    TokenStore               // nil: nothing kept
	show     func(server, url string) // nil: no one to sign in
	client   *http.Client             // the connection's
	inner    auth.OAuthHandler        // the SDK's handler
	ln       net.Listener             // the redirect's listener, while someone can sign in
	codes    chan *auth.AuthorizationResult
	web      *http.Server // serves ln
	needs    atomic.Bool  // a sign-in was needed and could not happen
	signedIn atomic.Bool  // a sign-in happened
	user     bool         // a user signs in (not the client credentials grant)
}

// newSigner is the OAuth handler of a connection to the HTTP server c. With
// opts.SignIn, a sign-in the server asks for is shown to the user and waited
// for; without, a server that needs one fails with ErrNeedsSignIn. fresh
// ignores a kept token (dsh mcp login).
func newSigner(c ServerConfig, opts Options, client *http.Client, fresh bool) (*signer, error) {
	o := c.OAuth
	if o == nil {
		o = &OAuth{}
	}
	s := &signer{server: c.Name, key: tokenKey(c), store: opts.Tokens, show: opts.SignIn, client: client,
		codes: make(chan *auth.AuthorizationResult, 1), user: !o.ClientCredentials}
	if o.ClientCredentials && o.PrivateKeyFile != "" {
		pemKey, err := readKey(o.PrivateKeyFile)
		if err != nil {
			return nil, err
		}
		s.inner, err = newKeyHandler(o.ClientID, pemKey, client)
		return s, err
	}
	if o.ClientCredentials {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{HTTPClient: client,
			Credentials: &oauthex.ClientCredentials{ClientID: o.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}}})
		s.inner = h
		return s, err
	}
	var initial oauth2.TokenSource
	if !fresh {
		initial = s.kept()
	}
	port := o.CallbackPort
	if s.show != nil {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("listening for the sign-in's return: %w", err)
		}
		s.ln, port = ln, ln.Addr().(*net.TCPAddr).Port
		s.web = &http.Server{Handler: http.HandlerFunc(s.callback), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.web.Serve(ln) }()
	}
	// RFC 8252: a native app's redirect is the loopback address with a port.
	redirect := "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: s.fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "dsh", GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RequestRefreshToken: true,
		Client:              client,
		NewTokenSource:      s.newTokenSource,
		InitialTokenSource:  initial,
	}
	if len(o.Scopes) > 0 {
		cfg.ScopeFilter = func(found []string) []string {
			if len(found) == 0 {
				return o.Scopes
			}
			return found
		}
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		s.close()
		return nil, err
	}
	s.inner = h
	return s, nil
}

func (s *signer) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return s.inner.TokenSource(ctx)
}

// Authorize answers a 401 or 403. Where no one can sign in, a 401 ends the
// attempt at once, before any registration with the authorization server.
func (s *signer) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if s.user && s.show == nil && resp.StatusCode == http.StatusUnauthorized {
		_ = resp.Body.Close()
		s.needs.Store(true)
		return ErrNeedsSignIn
	}
	return s.inner.Authorize(ctx, req, resp)
}

// fetch shows the authorization URL to the user and waits for the browser
// to come back to the loopback listener with the code.
func (s *signer) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if s.show == nil || s.ln == nil {
		s.needs.Store(true)
		return nil, ErrNeedsSignIn
	}
	select { // a code from an earlier, abandoned attempt is stale
	case <-s.codes:
	default:
	}
	s.show(s.server, args.URL)
	select {
	case r := <-s.codes:
		if r.Code == "" {
			return nil, fmt.Errorf("the sign-in was refused: %s", r.State)
		}
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no sign-in came back: %w", ctx.Err())
	}
}

// callback is the page the browser returns to.
func (s *signer) callback(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	res := &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	msg := "Signed in to " + s.server + ". You may close this tab and return to dsh."
	if e := q.Get("error"); e != "" || res.Code == "" {
		// The refusal's reason travels in State, which a refusal leaves unused.
		res = &auth.AuthorizationResult{State: truncate(sanitise(e+" "+q.Get("error_description")), 200)}
		msg = "The sign-in to " + s.server + " did not complete: " + res.State
	}
	select {
	case s.codes <- res:
	default:
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, "<!doctype html><title>dsh</title><p>%s</p>", html.EscapeString(msg))
}

// newTokenSource keeps a new sign-in and every token refreshed from it.
func (s *signer) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	in := signIn{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthURL: cfg.Endpoint.AuthURL,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle), Scopes: cfg.Scopes}
	k := &keeping{signer: s, in: in}
	s.signedIn.Store(true)
	if err := k.keep(tok); err != nil {
		return nil, err
	}
	k.base = cfg.TokenSource(ctx, tok)
	return k, nil
}

// kept is the token source of the sign-in kept for this server; nil when
// there is none, or none that can still be used.
func (s *signer) kept() oauth2.TokenSource {
	if s.store == nil {
		return nil
	}
	b, err := s.store.Load(s.key)
	if err != nil || b == nil {
		return nil
	}
	var in signIn
	if json.Unmarshal(b, &in) != nil || in.Token == nil || (!in.Token.Valid() && in.Token.RefreshToken == "") {
		return nil
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.client)
	return &keeping{signer: s, in: in, base: in.config().TokenSource(ctx, in.Token), last: in.Token.AccessToken}
}

// keeping is a token source that stores each new token it hands out.
type keeping struct {
	*signer
	in   signIn
	base oauth2.TokenSource
	mu   sync.Mutex
	last string
}

func (k *keeping) Token() (*oauth2.Token, error) {
	tok, err := k.base.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The authorization server refused the refresh: the sign-in is over.
			k.needs.Store(true)
			return nil, fmt.Errorf("%w again: the sign-in expired (%s)", ErrNeedsSignIn, re.ErrorCode)
		}
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if tok.AccessToken != k.last {
		if err := k.keep(tok); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

func (k *keeping) keep(tok *oauth2.Token) error {
	k.last = tok.AccessToken
	if k.store == nil {
		return nil
	}
	in := k.in
	in.Token = tok
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return k.store.Save(k.key, b)
}

// close stops listening for sign-ins.
func (s *signer) close() {
	if s.web != nil {
		_ = s.web.Close()
	}
}

// maxKeySize bounds a private key file.
const maxKeySize = 64 << 10

func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the private key: %w", err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxKeySize))
	if err != nil {
		return nil, fmt.Errorf("the private key: %w", err)
	}
	return b, nil
}

// SignOut forgets the sign-in kept for the server c.
func SignOut(c ServerConfig, store TokenStore) error {
	return store.Save(tokenKey(c), nil)
}

// Login signs in to the HTTP server c anew, whatever is kept: opts.SignIn
// shows the link, and the sign-in is waited for until ctx ends. It returns
// whether the server asked for one at all.
func Login(ctx context.Context, c ServerConfig, opts Options) (bool, error) {
	if c.Type != "http" && c.Type != "sse" {
		return false, fmt.Errorf("MCP server %s is not an http or sse server: only those sign in", c.Name)
	}
	if opts.SignIn == nil {
		return false, errors.New("no one to show the sign-in link to")
	}
	if d, ok := ctx.Deadline(); ok {
		opts.ConnectTimeout = time.Until(d)
	}
	opts.fresh = true
	srv, err := connect(ctx, c, opts)
	if err != nil {
		return false, &StartError{Server: c.Name, Err: err}
	}
	asked := srv.conn().signer.signedIn.Load()
	srv.stop()
	return asked, nil
}
