package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/supervisor"
)

// grace is how long a server has to exit after the exit notification, and
// then between SIGTERM and SIGKILL.
const grace = time.Second

// startTimeout bounds starting a server and its initialize handshake. A check
// waits only its own bound for it; the server goes on starting for the next.
const startTimeout = time.Minute

// client is one running language server.
type client struct {
	server string // the command's base name, for messages
	lang   string // the language's name (go, typescript…)
	root   string
	ids    map[string]string // extension → languageId, under Manager.mu

	ready   chan struct{} // closed once initialized, or failed (err)
	err     error
	spawned chan struct{} // closed once proc is set

	conn   jsonrpc2.Conn
	proc   *supervisor.Process
	exited chan struct{} // closed once the server and all it started are gone
	stderr *tail

	send sync.Mutex // orders didOpen/didChange with their versions
	mu   sync.Mutex
	docs map[uri.URI]*doc
	// all is the last publication for every file, open or not (gopls
	// reports its workspace's packages).
	all     map[uri.URI][]protocol.Diagnostic
	stopped bool
}

// doc is an open document and what the server last published for it.
type doc struct {
	version int32
	text    string
	pubs    int // publications received
	diags   []protocol.Diagnostic
	pubVer  int32 // the version the last publication named (0: none)
	wake    chan struct{}
}

// startClient starts the server of lang in the background, with the
// environment env (serverEnv's) and confined by policy (nil: not); checks wait
// for it.
func startClient(root, lang string, bin string, args []string, env []string, policy *sandbox.Policy) *client {
	c := &client{server: filepath.Base(bin), lang: lang, root: root, ids: map[string]string{},
		ready: make(chan struct{}), spawned: make(chan struct{}), docs: map[uri.URI]*doc{}, all: map[uri.URI][]protocol.Diagnostic{}}
	go func() {
		c.err = c.start(bin, args, env, policy)
		close(c.ready)
	}()
	return c
}

func (c *client) start(bin string, args []string, env []string, policy *sandbox.Policy) error {
	var pipes [3]struct{ r, w *os.File } // stdin, stdout, stderr
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				_, _ = p.r.Close(), p.w.Close()
			}
			return fmt.Errorf("server pipe: %w", err)
		}
		pipes[i].r, pipes[i].w = r, w
	}
	in, out, errs := pipes[0], pipes[1], pipes[2]
	proc, err := supervisor.Start(supervisor.Spec{Path: bin, Args: append([]string{bin}, args...), Dir: serverDir, Env: env,
		Input: in.r, Output: out.w, Errors: errs.w, Sandbox: policy, Grace: grace})
	_, _, _ = in.r.Close(), out.w.Close(), errs.w.Close()
	if err != nil {
		_, _, _ = in.w.Close(), out.r.Close(), errs.r.Close()
		return fmt.Errorf("start %s: %w", c.server, err)
	}
	c.mu.Lock()
	c.proc, c.exited, c.stderr = proc, make(chan struct{}), &tail{max: 2048}
	c.mu.Unlock()
	close(c.spawned)
	go func() {
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(c.stderr, errs.r)
			close(done)
		}()
		proc.Wait()
		<-done
		_ = errs.r.Close()
		close(c.exited)
	}()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(pipeRWC{out.r, in.w}))
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	conn.Go(context.Background(), c.handle)

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.exited:
			cancel() // a server that died answers nothing
		case <-ctx.Done():
		}
	}()
	root := uri.File(c.root)
	params := &protocol.InitializeParams{
		ProcessID:  int32(os.Getpid()),
		ClientInfo: &protocol.ClientInfo{Name: "dsh"},
		Capabilities: protocol.ClientCapabilities{
			TextDocument: &protocol.TextDocumentClientCapabilities{
				PublishDiagnostics: &protocol.PublishDiagnosticsClientCapabilities{VersionSupport: true},
			},
			Workspace: &protocol.WorkspaceClientCapabilities{Configuration: true, WorkspaceFolders: true},
		},
		WorkspaceFolders: []protocol.WorkspaceFolder{{URI: string(root), Name: filepath.Base(c.root)}},
	}
	// The server does not run in the workspace (serverDir): it is told where
	// the workspace is, also in the older field that servers without
	// workspace folders read instead of their directory. Not
	// typescript-language-server, which would then run the workspace's own
	// node_modules/typescript.
	if c.lang != "typescript" {
		params.RootURI = root //nolint:staticcheck // see above
	} else if ts := ownTsserver(bin, c.root); ts != "" {
		// And its own tsserver named, so that no later version picks the
		// workspace's from the workspace folders.
		params.InitializationOptions = map[string]any{"tsserver": map[string]any{"path": ts}}
	}
	if _, err := c.conn.Call(ctx, protocol.MethodInitialize, params, nil); err != nil {
		return c.explain(fmt.Errorf("initialize: %w", err))
	}
	if err := c.conn.Notify(ctx, protocol.MethodInitialized, &protocol.InitializedParams{}); err != nil {
		return c.explain(fmt.Errorf("initialized: %w", err))
	}
	return nil
}

// explain adds what the server last wrote on stderr to err.
func (c *client) explain(err error) error {
	if s := strings.TrimSpace(c.stderr.String()); s != "" {
		return fmt.Errorf("%w; its stderr ends: %s", err, s)
	}
	return err
}

// handle answers the server: diagnostics are kept, requests get an empty
// answer (workspace/configuration one null per item: the defaults).
func (c *client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := json.Unmarshal(req.Params(), &p); err == nil {
			c.published(&p)
		}
		return reply(ctx, nil, nil)
	case protocol.MethodWorkspaceConfiguration:
		var p protocol.ConfigurationParams
		_ = json.Unmarshal(req.Params(), &p)
		return reply(ctx, make([]any, len(p.Items)), nil)
	case protocol.MethodWorkspaceWorkspaceFolders:
		root := uri.File(c.root)
		return reply(ctx, []protocol.WorkspaceFolder{{URI: string(root), Name: filepath.Base(c.root)}}, nil)
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, nil)
	}
	return nil
}

// published keeps a publication for an open document and wakes its waiters.
// Only errors and warnings are kept, their text bounded (maxMessage).
func (c *client) published(p *protocol.PublishDiagnosticsParams) {
	p.Diagnostics = slices.DeleteFunc(p.Diagnostics, func(d protocol.Diagnostic) bool {
		return d.Severity == protocol.DiagnosticSeverityInformation || d.Severity == protocol.DiagnosticSeverityHint
	})
	for i, d := range p.Diagnostics {
		// Clones: a slice of the decoded message would keep all of it.
		p.Diagnostics[i] = protocol.Diagnostic{Range: d.Range, Severity: d.Severity,
			Message: strings.Clone(clip(d.Message, maxMessage)), Source: strings.Clone(clip(d.Source, maxSource))}
	}
	p.Diagnostics = slices.Clip(p.Diagnostics)
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[p.URI]
	if d == nil {
		if len(p.Diagnostics) == 0 {
			delete(c.all, p.URI)
		} else {
			c.all[p.URI] = p.Diagnostics
		}
		return
	}
	if p.Version != 0 && int32(p.Version) < d.version {
		return // about an older text
	}
	d.pubs++
	d.diags, d.pubVer = p.Diagnostics, int32(p.Version)
	c.all[p.URI] = p.Diagnostics
	close(d.wake)
	d.wake = make(chan struct{})
}

// check sends the file's content and waits for its diagnostics until ctx ends.
func (c *client) check(ctx context.Context, path, text string) *Report {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return &Report{Server: c.server, Pending: true}
	}
	if c.err != nil {
		return failed(c.server, c.err)
	}
	u := uri.File(path)
	c.send.Lock()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		c.send.Unlock()
		return failed(c.server, errStopped)
	}
	d := c.docs[u]
	fresh := d != nil && d.text == text && d.pubs > 0
	var err error
	switch {
	case fresh:
	case d == nil:
		d = &doc{version: 1, text: text, wake: make(chan struct{})}
		c.docs[u] = d
		id := c.ids[filepath.Ext(path)]
		c.mu.Unlock()
		err = c.conn.Notify(ctx, protocol.MethodTextDocumentDidOpen, &protocol.DidOpenTextDocumentParams{
			TextDocument: protocol.TextDocumentItem{URI: u, LanguageID: protocol.LanguageIdentifier(id), Version: 1, Text: text}})
		c.mu.Lock()
	default:
		d.version++
		d.text, d.pubs = text, 0
		v := d.version
		c.mu.Unlock()
		// The whole text as the change: protocol's change event always
		// carries a range, which would make it a ranged edit.
		err = c.conn.Notify(ctx, protocol.MethodTextDocumentDidChange, &didChange{
			TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: v},
			ContentChanges: []fullChange{{Text: text}}})
		c.mu.Lock()
	}
	c.mu.Unlock()
	c.send.Unlock()
	if err != nil {
		return failed(c.server, err)
	}
	for {
		c.mu.Lock()
		if d.pubs > 0 {
			r := c.report(path, d.diags)
			c.mu.Unlock()
			return r
		}
		wake := d.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-c.exited:
			return failed(c.server, c.explain(errStopped))
		case <-ctx.Done():
			return &Report{Server: c.server, Pending: true}
		}
	}
}

// didChange is DidChangeTextDocumentParams with a full-text change.
type didChange struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []fullChange                             `json:"contentChanges"`
}

type fullChange struct {
	Text string `json:"text"`
}

// known returns the errors and warnings last published for files under dir.
func (c *client) known(dir string) []card.Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []card.Diagnostic
	for u, ds := range c.all {
		path := u.Filename()
		if rel, err := filepath.Rel(dir, path); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		r := c.report(path, ds)
		out = append(out, r.Diagnostics...) // bounded per file
	}
	return out
}

// report turns a file's diagnostics into its errors and warnings, in order.
func (c *client) report(path string, ds []protocol.Diagnostic) *Report {
	r := &Report{Server: c.server, Diagnostics: []card.Diagnostic{}}
	for _, d := range ds {
		var sev card.Severity
		switch d.Severity {
		case protocol.DiagnosticSeverityError, 0: // no severity: the client's call; an error
			sev = card.SeverityError
		case protocol.DiagnosticSeverityWarning:
			sev = card.SeverityWarning
		case protocol.DiagnosticSeverityInformation, protocol.DiagnosticSeverityHint:
			continue // not problems to act on
		default:
			continue
		}
		r.Diagnostics = append(r.Diagnostics, card.Diagnostic{Path: path, Line: int(d.Range.Start.Line) + 1,
			Column: int(d.Range.Start.Character) + 1, Severity: sev, Message: d.Message, Source: d.Source})
	}
	slices.SortStableFunc(r.Diagnostics, func(a, b card.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	n, size := 0, 0
	for n < len(r.Diagnostics) && n < MaxDiagnostics {
		size += len(r.Diagnostics[n].Message) + len(r.Diagnostics[n].Source)
		if size > maxFileBytes && n > 0 {
			break
		}
		n++
	}
	r.More = len(r.Diagnostics) - n
	r.Diagnostics = r.Diagnostics[:n]
	return r
}

// clip shortens s to at most max bytes, on a rune boundary, marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func (c *client) pgid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.Pgid
}

// stop ends the server: shutdown and exit, a moment to go, then SIGTERM and
// SIGKILL; with now, SIGKILL at once. It returns once everything it started
// is gone.
func (c *client) stop(now bool) {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	if !now {
		select {
		case <-c.ready:
		case <-time.After(grace):
		}
	}
	c.mu.Lock()
	proc, exited, conn := c.proc, c.exited, c.conn
	c.mu.Unlock()
	if proc == nil {
		// The process is about to be, or the start failed before it: not
		// the handshake's bound (startTimeout) to wait.
		select {
		case <-c.spawned:
		case <-c.ready:
		}
		c.mu.Lock()
		proc, exited, conn = c.proc, c.exited, c.conn
		c.mu.Unlock()
		if proc == nil {
			return
		}
	}
	if now {
		proc.Kill()
		<-exited
		if conn != nil {
			_ = conn.Close()
		}
		return
	}
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		_, err := conn.Call(ctx, protocol.MethodShutdown, nil, nil)
		if err == nil {
			_ = conn.Notify(ctx, protocol.MethodExit, nil)
		}
		cancel()
		_ = conn.Close()
	}
	for _, end := range []func(){proc.Terminate, proc.Kill} {
		select {
		case <-exited:
			return
		case <-time.After(grace):
		}
		end()
	}
	<-exited
}

// pipeRWC is the server's stdout and stdin as one stream.
type pipeRWC struct {
	r *os.File
	w *os.File
}

func (p pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRWC) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
