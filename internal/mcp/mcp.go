// Package mcp connects dsh to Model Context Protocol servers — local ones over
// stdio, remote ones over streamable HTTP or SSE — and offers their tools to the
// model as dsh tools named mcp__<server>__<tool>, with the server's own input
// schema.
//
// A server that fails to start is an error Start returns. A stdio server that
// dies later is started again once (Options.OnRestart); one that dies for
// good is reported through Options.OnExit, and calls to it return error
// results.
// Close stops every server, and with it every process a stdio server started:
// each runs under a supervisor (package supervisor) like a shell command, so
// nothing it started, in its process group or not, outlives it, the session,
// or dsh, even killed with SIGKILL.
package mcp

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-dev/dsh/internal/secretenv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/supervisor"
	"github.com/dsh-dev/dsh/internal/tool"
)

// serverGrace is how long a stdio server has to end once its stdin closed,
// and then again between SIGTERM and SIGKILL.
const serverGrace = 2 * time.Second

// ServerConfig is one server to connect to. Its fields match config.MCPServer,
// so one converts to the other.
type ServerConfig struct {
	Name    string
	Type    string // stdio, http or sse
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Trusted: the user vouches for the server, so its tools' hints
	// (readOnlyHint) are believed; an untrusted server's tools all ask.
	Trusted bool
	// OAuth: how to sign in to an http server (nil: as its authorization
	// server offers, once it asks).
	OAuth *OAuth
}

// Options tune Start. The zero value works.
type Options struct {
	// ClientVersion is reported to servers as dsh's version.
	ClientVersion string
	// Dir is the working directory of stdio servers ("": dsh's own).
	Dir string
	// Environ is the base environment of stdio servers, before the server's
	// own Env; nil means dsh's environment. Credential-looking variables are
	// removed from it either way: a server gets the secrets its Env names.
	Environ []string
	// HTTPClient carries the remote transports (nil: http.DefaultClient).
	HTTPClient *http.Client
	// ConnectTimeout bounds starting one server, initialisation and tool
	// listing included (0: one minute; npx may have to install first).
	ConnectTimeout time.Duration
	// OnExit is told when a server stops on its own for good, with why. It
	// is not called for servers stopped by Close.
	OnExit func(server string, err error)
	// ToolsChanged is told when a server listed its tools again, changed
	// (tools/list_changed) or started again: Tools has them.
	ToolsChanged func()
	// ListsChanged is told when a server's prompts were listed again
	// (prompts/list_changed, or a restart) or it said its resources changed
	// (resources/list_changed): Prompts and Resources have them.
	ListsChanged func()
	// OnRestart is told when a stdio server that stopped on its own, with
	// why, was started again (once a session).
	OnRestart func(server string, err error)
	// Tokens keeps HTTP servers' sign-ins between sessions (nil: none kept).
	Tokens TokenStore
	// SignIn shows the user the link that signs dsh in to server, and the
	// server's start waits (ConnectTimeout) for the browser to return. nil:
	// a server that needs a sign-in no kept token answers fails with
	// ErrNeedsSignIn.
	SignIn func(server, url string)
	// Notice is told what of a server's listings was left out, and why.
	Notice func(server, msg string)
	// Roots are the directories the session works in (absolute), offered to
	// servers as their roots; none: no roots capability, so a server keeps
	// the directories its configuration gave it.
	Roots []string
	// Log receives the servers' log messages (notifications/message) at
	// debug level; nil drops them.
	Log *slog.Logger

	fresh bool // sign in anew, whatever is kept (Login)
}

// StartError is a server that could not be started.
type StartError struct {
	Server string
	Err    error
}

func (e *StartError) Error() string { return fmt.Sprintf("MCP server %s: %v", e.Server, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Servers is a session's running MCP servers.
type Servers struct {
	opts Options // Start's, for the servers that join later

	mu      sync.Mutex
	servers []*server
	closed  bool
}

// all is the servers now.
func (s *Servers) all() []*server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.servers)
}

// server is one configured server, over its connections: a stdio server
// that dies is connected again once.
type server struct {
	name    string
	trusted bool
	cfg     ServerConfig
	opts    Options
	calls   calls // running, for the server's requests (elicitation)

	life   context.Context // the server's, over its connections; ended by stop
	cancel context.CancelFunc

	relisting atomic.Int32 // prompts listings wanted (list_changed)
	retooling atomic.Int32 // tools listings wanted (list_changed)

	mu        sync.Mutex
	c         *conn // the current connection; swapped on a restart
	tools     []*sdk.Tool
	prompts   []*sdk.Prompt
	closing   bool
	restarted bool  // the one restart is used
	dead      error // set when the server ended on its own for good
	done      chan struct{}
}

// conn is one connection to a server, and for stdio its process.
type conn struct {
	session *sdk.ClientSession
	signer  *signer             // http only
	proc    *supervisor.Process // stdio only
	exited  chan struct{}       // stdio only: closed once the server and all it started are gone, and its stderr read
	stderr  *tailBuffer
	end     context.CancelFunc // ends the connection's context
	ready   chan struct{}      // closed once dial is done with it: session is set, or stays nil
}

// conn is the current connection.
func (s *server) conn() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// Start connects to every server at once. It returns the servers that
// started and, joined, a *StartError for each one that did not; the caller
// reports those to the user and the model. Servers is never nil.
func Start(ctx context.Context, cfgs []ServerConfig, opts Options) (*Servers, error) {
	s := &Servers{opts: opts, servers: make([]*server, len(cfgs))}
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Go(func() {
			srv, err := connect(ctx, c, opts)
			if err != nil {
				errs[i] = &StartError{Server: c.Name, Err: err}
				return
			}
			s.servers[i] = srv
		})
	}
	wg.Wait()
	s.servers = slices.DeleteFunc(s.servers, func(srv *server) bool { return srv == nil })
	return s, errors.Join(errs...)
}

func connect(ctx context.Context, c ServerConfig, opts Options) (*server, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	srv := &server{name: c.Name, trusted: c.Trusted, cfg: c, opts: opts, done: make(chan struct{}), life: life, cancel: cancel}
	cn, err := srv.dial(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	srv.c = cn
	go srv.watch()
	return srv, nil
}

// dial makes a connection to the server and lists its tools and prompts.
func (s *server) dial(ctx context.Context) (*conn, error) {
	c, opts := s.cfg, s.opts
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	// The SSE transports keep their stream in the context Connect gets, so it
	// lives as long as the connection, bounded only while the handshake runs.
	life, end := context.WithCancel(s.life)
	handshake := time.AfterFunc(timeout, end)
	stopCtx := context.AfterFunc(ctx, end) // the caller gave up before the handshake ended
	cn := &conn{end: end, ready: make(chan struct{})}
	defer close(cn.ready)
	var transport sdk.Transport
	switch c.Type {
	case "stdio", "":
		if c.Command == "" {
			end()
			return nil, errors.New("no command")
		}
		path := c.Command
		if !strings.Contains(path, "/") { // a relative path is found from Dir when it starts
			var err error
			if path, err = exec.LookPath(path); err != nil {
				end()
				return nil, err
			}
		}
		t, err := cn.startStdio(path, c.Args, opts.Dir, serverEnv(opts.Environ, c.Env))
		if err != nil {
			end()
			return nil, err
		}
		transport = t
	case "http", "sse":
		hc := bounded(withHeaders(opts.HTTPClient, c.Headers))
		sg, err := newSigner(c, opts, hc, opts.fresh)
		if err != nil {
			end()
			return nil, fmt.Errorf("signing in: %w", err)
		}
		cn.signer = sg
		if c.Type == "http" {
			transport = &sdk.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc, OAuthHandler: sg, MaxEventSize: maxMessage}
		} else {
			// The SDK's SSE transport has no OAuth hook: its client signs
			// the requests (signed).
			transport = &sdk.SSEClientTransport{Endpoint: c.URL, HTTPClient: signed(hc, sg), MaxEventSize: maxMessage}
		}
	default:
		end()
		return nil, fmt.Errorf("unknown transport %q (want stdio, http or sse)", c.Type)
	}

	version := opts.ClientVersion
	if version == "" {
		version = "(devel)"
	}
	caps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{
		Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}}
	if len(opts.Roots) > 0 {
		// Without roots, no capability: a server confined to the directories
		// it was given must not have them replaced by an empty list.
		caps.RootsV2 = &sdk.RootCapabilities{} //nolint:staticcheck // deprecated from protocol 2026-07-28; the servers of earlier ones use it
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: version}, &sdk.ClientOptions{
		Capabilities:       caps,
		ElicitationHandler: s.elicit,
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) { //nolint:staticcheck // deprecated from protocol 2026-07-28; the servers of earlier ones use it
			b, _ := json.Marshal(r.Params.Data)
			log.Debug("MCP server log", "server", c.Name, "level", string(r.Params.Level), "logger", Label(r.Params.Logger),
				"data", truncate(sanitise(string(b)), 4096))
		},
		ProgressNotificationHandler: s.progress,
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { s.changed(cn, opts.Notice, opts.ListsChanged) },
		// Resources are listed when asked for: who keeps a listing is told.
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			if opts.ListsChanged != nil {
				opts.ListsChanged()
			}
		},
		// The model is offered the new tools from its next call. Only the
		// debug log says so: npm's reference server changes its tools as
		// soon as it learns the client's capabilities.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			log.Debug("MCP server changed its tools; listing them again", "server", c.Name)
			s.toolsChanged(cn, opts.Notice, opts.ToolsChanged)
		},
	})
	for _, r := range opts.Roots {
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: r}).String(), Name: filepath.Base(r)}) //nolint:staticcheck // deprecated from protocol 2026-07-28; the servers of earlier ones use it
	}
	session, err := client.Connect(life, transport, nil)
	if !handshake.Stop() || !stopCtx() {
		err = errors.Join(err, fmt.Errorf("not ready within %v or cancelled", timeout))
	}
	if err != nil {
		if session != nil {
			_ = session.Close()
		}
		cn.kill()
		if t, ok := transport.(*sdk.IOTransport); ok {
			_ = t.Reader.Close() // the session may not have started to own them
			_ = t.Writer.Close()
		}
		end()
		if cn.signer != nil {
			cn.signer.close()
			if cn.signer.needs.Load() && !errors.Is(err, ErrNeedsSignIn) {
				err = fmt.Errorf("%w: %w", ErrNeedsSignIn, err)
			}
		}
		return nil, cn.explain(err)
	}
	cn.session = session
	listCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.list(listCtx, cn, opts.Notice); err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

// startStdio starts a stdio server under a supervisor, with a pipe for each of
// its stdin, stdout and stderr, and returns the transport over the first two.
func (s *conn) startStdio(path string, args []string, dir string, env []string) (sdk.Transport, error) {
	var pipes [3]struct{ r, w *os.File } // stdin, stdout, stderr
	closeAll := func() {
		for _, p := range pipes {
			if p.r != nil {
				_ = p.r.Close()
				_ = p.w.Close()
			}
		}
	}
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("server pipe: %w", err)
		}
		pipes[i].r, pipes[i].w = r, w
	}
	in, out, errs := pipes[0], pipes[1], pipes[2]
	proc, err := supervisor.Start(supervisor.Spec{Path: path, Args: append([]string{path}, args...), Dir: dir, Env: env,
		Input: in.r, Output: out.w, Errors: errs.w, Grace: serverGrace})
	if err != nil {
		closeAll()
		return nil, err
	}
	// The server's ends are its own now.
	_ = in.r.Close()
	_ = out.w.Close()
	_ = errs.w.Close()
	s.proc, s.exited, s.stderr = proc, make(chan struct{}), &tailBuffer{max: 4096}
	go func() {
		stderrDone := make(chan struct{})
		go func() {
			_, _ = io.Copy(s.stderr, errs.r)
			close(stderrDone)
		}()
		proc.Wait() // it and everything it started are gone, so is every writer of stderr
		<-stderrDone
		_ = errs.r.Close()
		close(s.exited)
	}()
	return &sdk.IOTransport{Reader: out.r, Writer: in.w, MaxLineLength: maxMessage}, nil
}

// watch waits for the server's connection to end; an end nobody asked for
// is a death. A stdio server is started again the first time.
func (s *server) watch() {
	var dead error
	for {
		c := s.conn()
		err := c.session.Wait()
		c.settle()
		if err == nil {
			err = errors.New("the connection closed")
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			break
		}
		why := c.explain(fmt.Errorf("stopped: %w", err))
		if c.proc != nil && !s.restarted {
			s.restarted = true
			s.mu.Unlock()
			c.close()
			if rerr := s.restart(); rerr == nil {
				if s.opts.ToolsChanged != nil { // the new process may offer other tools
					s.opts.ToolsChanged()
				}
				if s.opts.ListsChanged != nil { // and other prompts and resources
					s.opts.ListsChanged()
				}
				if s.opts.OnRestart != nil {
					s.opts.OnRestart(s.name, why)
				}
				continue
			} else {
				why = fmt.Errorf("%w; starting it again failed: %w", why, rerr)
			}
			s.mu.Lock()
			if s.closing {
				s.mu.Unlock()
				break
			}
		} else if s.restarted {
			why = fmt.Errorf("%w, after it was started again once", why)
		}
		s.dead = why
		dead = why
		s.mu.Unlock()
		break
	}
	close(s.done)
	if dead != nil && s.opts.OnExit != nil {
		s.opts.OnExit(s.name, dead)
	}
}

// restart connects to the server anew in place of its dead connection.
func (s *server) restart() error {
	ctx, cancel := context.WithCancel(s.life)
	defer cancel()
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.closing { // stop took the old connection: this one is ours to end
		s.mu.Unlock()
		c.close()
		return errors.New("the session is closing")
	}
	s.c = c
	s.mu.Unlock()
	return nil
}

// settle waits, for a stdio server whose stdout closed, until it and what it
// started are gone (or will be ended by halt): what a dying server said on
// stderr explains its death.
func (c *conn) settle() {
	if c.exited != nil {
		select {
		case <-c.exited:
		case <-time.After(serverGrace):
		}
	}
}

// explain adds what a stdio server last wrote on stderr to err.
func (s *conn) explain(err error) error {
	if s.stderr == nil {
		return err
	}
	if tail := strings.TrimSpace(s.stderr.String()); tail != "" {
		return fmt.Errorf("%w; its stderr ends: %s", err, tail)
	}
	return err
}

// call runs one tool on the server and turns its answer into a result.
func (s *server) call(ctx context.Context, name string, args json.RawMessage, id int) tool.Result {
	s.mu.Lock()
	dead := s.dead
	s.mu.Unlock()
	if dead != nil {
		return tool.Errorf("MCP server %s is not running (%v); its tools cannot be used in this session.", s.name, dead)
	}
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(progressToken(id))
	res, err := s.conn().session.CallTool(ctx, params)
	if err != nil {
		s.mu.Lock()
		if s.dead != nil {
			err = s.dead
		}
		s.mu.Unlock()
		return tool.Errorf("MCP server %s: calling %s failed: %v", s.name, name, err)
	}
	return result(res)
}

// result converts a tool's answer: text and images as they are, everything
// else as text the model can read.
func result(res *sdk.CallToolResult) tool.Result {
	var out []card.Content
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, card.Text(c.Text))
		case *sdk.ImageContent:
			out = append(out, card.Image(c.MIMEType, base64.StdEncoding.EncodeToString(c.Data)))
		case *sdk.AudioContent:
			out = append(out, card.Text(fmt.Sprintf("[audio, %s, %d bytes: not shown]", c.MIMEType, len(c.Data))))
		case *sdk.ResourceLink:
			out = append(out, card.Text(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI)))
		case *sdk.EmbeddedResource:
			out = append(out, embedded(c.Resource))
		default:
			out = append(out, card.Text(fmt.Sprintf("[%T content: not shown]", c)))
		}
	}
	if len(out) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out = append(out, card.Text(string(b)))
		}
	}
	return tool.Result{Content: out, IsError: res.IsError}
}

func embedded(r *sdk.ResourceContents) card.Content {
	switch {
	case r == nil:
		return card.Text("[empty resource]")
	case r.Text != "":
		return card.Text(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
	case strings.HasPrefix(r.MIMEType, "image/"):
		return card.Image(r.MIMEType, base64.StdEncoding.EncodeToString(r.Blob))
	default:
		return card.Text(fmt.Sprintf("[resource %s, %s, %d bytes: not shown]", r.URI, r.MIMEType, len(r.Blob)))
	}
}

// stop closes the connection and ends the server and what it started, and
// waits for a restart under way to end what it started.
func (s *server) stop() {
	s.mu.Lock()
	s.closing = true
	c := s.c
	s.mu.Unlock()
	s.cancel()
	c.close()
	<-s.done
}

// close closes the session and then ends the server and what it started.
func (c *conn) close() {
	_ = c.session.Close() // its error is the server's exit status: nothing to act on
	c.halt()
	c.end()
	if c.signer != nil {
		c.signer.close()
	}
}

// halt ends a stdio server and everything it started, whether they left its
// process group or not: a server started through npx or a shell leaves
// children that closing stdin does not reach. The server has a moment to end
// on its own once its stdin closed, then SIGTERM, then SIGKILL.
func (s *conn) halt() {
	if s.proc == nil {
		return
	}
	for _, end := range []func(){s.proc.Terminate, s.proc.Kill} {
		select {
		case <-s.exited:
			return
		case <-time.After(serverGrace):
		}
		end()
	}
	<-s.exited
}

// kill ends a stdio server that never connected, and what it started, at once.
func (s *conn) kill() {
	if s.proc != nil {
		s.proc.Kill()
		<-s.exited
	}
}

// Join connects to c, which Start could not start because it needs the
// user to sign in: signIn shows the link, and the connection waits for the
// browser until ctx ends. Once connected, c is one of the servers, told as a
// change of tools and lists.
func (s *Servers) Join(ctx context.Context, c ServerConfig, signIn func(server, url string)) error {
	opts := s.opts
	opts.SignIn = signIn
	if d, ok := ctx.Deadline(); ok {
		opts.ConnectTimeout = time.Until(d)
	}
	srv, err := connect(ctx, c, opts)
	if err != nil {
		return &StartError{Server: c.Name, Err: err}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		srv.stop()
		return &StartError{Server: c.Name, Err: errors.New("the session closed")}
	}
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	if opts.ToolsChanged != nil {
		opts.ToolsChanged()
	}
	if opts.ListsChanged != nil {
		opts.ListsChanged()
	}
	return nil
}

// Close stops every server and every process they started.
func (s *Servers) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, srv := range s.all() {
		wg.Go(srv.stop)
	}
	wg.Wait()
	return nil
}

// Tools returns every server's tools as dsh tools, in server then tool order.
// Names that sanitise alike across servers ("x.y" and "x_y") get the hash
// suffix, so every tool stays callable and none replaces another.
func (s *Servers) Tools() []tool.Tool {
	var out []tool.Tool
	seen := map[string]bool{}
	for _, srv := range s.all() {
		out = append(out, srv.adapt(seen)...)
	}
	return out
}

// Prompt is a server's prompt (template), offered as a slash command.
type Prompt struct {
	Server, Name, Description string
	Args                      []PromptArg
}

// PromptArg is one of a prompt's arguments.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// Prompts returns every server's prompts, in server then prompt order.
func (s *Servers) Prompts() []Prompt {
	var out []Prompt
	for _, srv := range s.all() {
		srv.mu.Lock()
		prompts := srv.prompts
		srv.mu.Unlock()
		for _, p := range prompts {
			pr := Prompt{Server: srv.name, Name: p.Name, Description: cmp.Or(p.Description, p.Title)}
			for _, a := range p.Arguments {
				if a != nil {
					pr.Args = append(pr.Args, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
				}
			}
			out = append(out, pr)
		}
	}
	return out
}

// maxPromptText bounds the text a prompt expands to: it becomes the user's
// message.
const maxPromptText = 256 << 10

// GetPrompt asks server for its prompt name with args and returns its
// messages' text, which becomes the user's prompt.
func (s *Servers) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	for _, srv := range s.all() {
		if srv.name != server {
			continue
		}
		c := srv.conn()
		res, err := c.session.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return "", fmt.Errorf("MCP server %s, prompt %s: %w", server, name, c.explain(err))
		}
		var b strings.Builder
		for _, m := range res.Messages {
			if m == nil {
				continue
			}
			switch c := m.Content.(type) {
			case *sdk.TextContent:
				if b.Len() > 0 {
					b.WriteString("\n\n")
				}
				b.WriteString(c.Text)
			case *sdk.EmbeddedResource:
				if c.Resource != nil && c.Resource.Text != "" {
					fmt.Fprintf(&b, "\n\n%s:\n%s", c.Resource.URI, c.Resource.Text)
				}
			}
			if b.Len() > maxPromptText {
				return "", fmt.Errorf("MCP server %s, prompt %s: longer than %d bytes", server, name, maxPromptText)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no MCP server %s in this session", server)
}

// Names returns the names of the running servers.
func (s *Servers) Names() []string {
	var out []string
	for _, srv := range s.all() {
		out = append(out, srv.name)
	}
	return out
}

// ToolNames returns the names server gives its tools.
func (s *Servers) ToolNames(server string) []string {
	var out []string
	for _, srv := range s.all() {
		if srv.name == server {
			srv.mu.Lock()
			tools := srv.tools
			srv.mu.Unlock()
			for _, t := range tools {
				out = append(out, t.Name)
			}
		}
	}
	return out
}

// Stopped says whether server stopped on its own.
func (s *Servers) Stopped(server string) bool {
	for _, srv := range s.all() {
		if srv.name == server {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			return srv.dead != nil
		}
	}
	return false
}

// serverEnv is the environment of a stdio server: the base without
// credentials, then the server's own variables.
func serverEnv(base []string, own map[string]string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		name, value, _ := strings.Cut(kv, "=")
		_, overridden := own[name]
		// The rule every command's environment is scrubbed by: a server sees
		// what a shell command would.
		return secretenv.Secret(name, value) || overridden
	})
	for _, k := range sortedKeys(own) {
		env = append(env, k+"="+own[k])
	}
	return env
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withHeaders returns a client that adds headers to every request.
func withHeaders(c *http.Client, headers map[string]string) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	if len(headers) == 0 {
		return c
	}
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = headerTransport{base: base, headers: headers}
	return &cc
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = slices.Clone(t.b[len(t.b)-t.max:])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
