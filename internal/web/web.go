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
}

// Server serves the web view. It is an http.Handler.
type Server struct {
	o      Options
	cookie string // the token cookie's name, distinct per token (cookies ignore ports)
	mux    *http.ServeMux
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
	sum := sha256.Sum256([]byte(o.Token))
	s := &Server{o: o, cookie: "dsh-" + hex.EncodeToString(sum[:6]), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.handleList)
	s.mux.HandleFunc("GET /s/{id}", s.handleSession)
	s.mux.HandleFunc("GET /s/{id}/events", s.handleEvents)
	s.mux.HandleFunc("GET /s/{id}/call/{call}", s.handleCall)
	s.mux.HandleFunc("GET /static/{file}", s.handleStatic)
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return s, nil
}

// ServeHTTP checks the token, sets the security headers and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if q := r.URL.Query().Get("token"); q != "" {
		if !s.tokenOK(q) {
			forbidden(w)
			return
		}
		// The cookie carries the token from now on (static files, events, links);
		// redirecting drops it from the address bar.
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.o.Token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
	} else if c, err := r.Cookie(s.cookie); err != nil || !s.tokenOK(c.Value) {
		forbidden(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.o.Token)) == 1
}

func forbidden(w http.ResponseWriter) {
	http.Error(w, "403 forbidden: open the URL that `dsh web` printed (it carries the access token)",
		http.StatusForbidden)
}

// hostGuard refuses a request whose Host is not the listen address (or
// localhost at its port): a page on another site that rebinds its DNS name to
// 127.0.0.1 reaches the server under its own name, and is turned away before the
// token is even looked at.
func hostGuard(addr net.Addr, h http.Handler) http.Handler {
	want := map[string]bool{addr.String(): true}
	if _, port, err := net.SplitHostPort(addr.String()); err == nil {
		want[net.JoinHostPort("localhost", port)] = true
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
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           hostGuard(ln.Addr(), h),
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
