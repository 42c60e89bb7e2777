// Package web is dsh's local web view: a list of every session and a page per
// session that renders its messages and cards and follows its log live.
//
// The page is rendered on the server (markup.go) from the same cards the other
// consumers show (internal/view); a live page receives each new record as an HTML
// fragment over server-sent events, rendered by the same functions. Styles and the
// one small script are embedded, so nothing is built or fetched.
//
// Everything a session holds — file contents, command output, the model's words — is
// untrusted: it only ever reaches the page through the escaping writer of render.go
// (html/template's escaping, reproduced), chroma's escaping formatter or the Markdown
// renderer followed by a sanitiser, and the
// Content-Security-Policy allows no inline script. Every request must carry the
// server's random token (the printed URL has it; the page then keeps it in a cookie).
//
// Given an opener (Options.Open, Options.Join), the page also drives sessions
// (drive*.go): it starts or joins one, hands what the user types to the host's
// one door, and shows the permission requests and questions waiting for an
// answer. Every POST needs the cookie and the page's own origin.
package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/tool"
)

// Options configure a Server.
type Options struct {
	// Dir is the session directory.
	Dir string
	// Token must be presented by every request; make it with NewToken.
	Token string
	// Registry presents the tools' cards.
	Registry *tool.Registry
	// Location is the time zone times are shown in; nil means time.Local.
	Location *time.Location

	// Open opens a session for the page to drive (a new one, or one to go on
	// with); nil makes a server that only shows sessions.
	Open func(ctx context.Context, r OpenRequest) (Live, error)
	// Join attaches to a session live in another dsh process (its control
	// endpoint); nil when joining is not available.
	Join func(ctx context.Context, id string) (Live, error)
	// Roots are the directories the page may start sessions in, or in a
	// directory inside one.
	Roots []string
	// MaxBody bounds a request's body; 0 is 32 MiB.
	MaxBody int64
}

// Server serves the web view. It is an http.Handler.
type Server struct {
	o      Options
	cookie string // the token cookie's name, distinct per token (cookies ignore ports)
	mux    *http.ServeMux
	roots  []string // Options.Roots, resolved
	driven drivers
	// ctx is the driven sessions' turns'; stop ends it (Close).
	ctx  context.Context
	stop context.CancelFunc
}

// csp allows scripts, styles and images from the server itself only (and data:
// images, which tool results may carry): no inline script can run, whatever a
// session's content manages to put on the page.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// NewToken returns a fresh random token: 256 bits from crypto/rand.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// New returns a server for o.
func New(o Options) (*Server, error) {
	if len(o.Token) < 16 {
		return nil, errors.New("web: the token is missing or too short")
	}
	if o.Registry == nil {
		return nil, errors.New("web: no tool registry")
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.MaxBody <= 0 {
		o.MaxBody = defaultMaxBody
	}
	sum := sha256.Sum256([]byte(o.Token))
	s := &Server{o: o, cookie: "dsh-" + hex.EncodeToString(sum[:6]), mux: http.NewServeMux()}
	for _, r := range o.Roots {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			return nil, fmt.Errorf("web: directory %s: %w", r, err)
		}
		s.roots = append(s.roots, real)
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.mux.HandleFunc("GET /{$}", s.handleList)
	s.mux.HandleFunc("GET /s/{id}", s.handleSession)
	s.mux.HandleFunc("GET /s/{id}/events", s.handleEvents)
	s.mux.HandleFunc("GET /s/{id}/call/{call}", s.handleCall)
	s.mux.HandleFunc("GET /static/{file}", s.handleStatic)
	s.mux.HandleFunc("GET /s/{id}/control", s.handleControl)
	s.mux.HandleFunc("POST /new", s.handleNew)
	s.mux.HandleFunc("POST /s/{id}/resume", s.handleResume)
	s.mux.HandleFunc("POST /s/{id}/join", s.handleJoin)
	s.mux.HandleFunc("POST /s/{id}/input", s.handleInput)
	s.mux.HandleFunc("POST /s/{id}/cancel", s.handleCancel)
	s.mux.HandleFunc("POST /s/{id}/answer/{key}", s.handleAnswer)
	s.mux.HandleFunc("POST /s/{id}/delete", s.handleDelete)
	s.mux.HandleFunc("POST /s/{id}/rename", s.handleRename)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return s, nil
}

// ServeHTTP checks the token, sets the security headers and routes the request.
// A request that changes anything (any method but GET and HEAD) must carry the
// token's cookie — never the token in its URL — and come from the page's own
// origin: a page of another site that makes the browser post here (CSRF) is
// refused, cookie or not.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if why := crossOrigin(r); why != "" {
			http.Error(w, "403 forbidden: "+why, http.StatusForbidden)
			return
		}
		if c, err := r.Cookie(s.cookie); err != nil || !s.tokenOK(c.Value) || r.URL.Query().Has("token") {
			forbidden(w)
			return
		}
		s.mux.ServeHTTP(w, r)
		return
	}
	if q := r.URL.Query().Get("token"); q != "" {
		if !s.tokenOK(q) {
			forbidden(w)
			return
		}
		// The cookie carries the token from now on (static files, events, links);
		// redirecting drops it from the address bar.
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.o.Token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return
	} else if c, err := r.Cookie(s.cookie); err != nil || !s.tokenOK(c.Value) {
		forbidden(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

// crossOrigin says why r does not come from the page's own origin, "" when it
// does: its Origin is this server (the Host was checked by hostGuard), or,
// from a browser that sends no Origin, Sec-Fetch-Site says same-origin. A
// request with neither is refused: every browser sends one of them with a POST.
func crossOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if o := r.Header.Get("Origin"); o != "" {
		if !strings.EqualFold(o, scheme+"://"+r.Host) {
			return "a request from another origin (" + o + ")"
		}
		return ""
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "same-origin":
		return ""
	case "":
		return "a request without Origin or Sec-Fetch-Site (send it from the page, or set Origin)"
	default:
		return "a request from another site (Sec-Fetch-Site: " + site + ")"
	}
}

func forbidden(w http.ResponseWriter) {
	http.Error(w, "403 forbidden: open the URL that `dsh web` printed (it carries the access token)",
		http.StatusForbidden)
}

// hostGuard refuses a request whose Host is not the listen address (or
// localhost at its port): a page on another site that rebinds its DNS name to
// 127.0.0.1 reaches the server under its own name, and is turned away before the
// token is even looked at.
//
// names are other names the server answers to at its port (a server beyond
// loopback: the machine's addresses and name).
func hostGuard(addr net.Addr, h http.Handler, names ...string) http.Handler {
	want := map[string]bool{addr.String(): true}
	if _, port, err := net.SplitHostPort(addr.String()); err == nil {
		for _, n := range append(names, "localhost") {
			want[strings.ToLower(net.JoinHostPort(n, port))] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !want[strings.ToLower(r.Host)] {
			http.Error(w, "421 misdirected request: this server answers only at "+addr.String(), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve serves h on ln until ctx is done, then shuts down: open pages (their event
// streams follow ctx) are given a moment to finish. It returns nil after ctx ends.
// It answers at ln's address, localhost and names (hostGuard).
func Serve(ctx context.Context, ln net.Listener, h http.Handler, names ...string) error {
	srv := &http.Server{
		Handler:           hostGuard(ln.Addr(), h, names...),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("web: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: %w", err)
	}
	return nil
}
