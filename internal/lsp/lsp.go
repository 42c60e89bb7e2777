// Package lsp is dsh's language-server client. After a file tool changes a
// file it hands the new content to the server for the file's language
// (didOpen, then didChange) and waits, bounded, for that file's
// publishDiagnostics: the errors and warnings go back to the model in the
// tool's result and to the user on the diff card.
//
// A Manager belongs to one session's workspace. It starts a language's
// server the first time a file of that language is checked, when the
// server's command is installed and the user trusts the folder (Trust), and
// keeps it for the session. Every server runs under a supervisor (package
// supervisor), like an MCP stdio server, so neither it nor anything it starts
// outlives the session or dsh; in the sandbox when the session's commands
// run there; outside the workspace, with a command and toolchain the
// repository cannot choose (resolve.go).
package lsp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/sandbox"
)

// DefaultWait bounds how long a check waits for the server's diagnostics.
const DefaultWait = 3 * time.Second

// A check reports at most MaxDiagnostics diagnostics for one file, whose
// messages and sources together are at most maxFileBytes (the first is always
// reported), each message at most maxMessage bytes: what a server publishes
// reaches the model, the log and every card.
const (
	MaxDiagnostics = 20
	maxFileBytes   = 8 << 10
	maxMessage     = 1 << 10
	maxSource      = 64
	maxFailed      = 1 << 10
)

// language is a language dsh knows a server for.
type language struct {
	name    string            // the config key: [lsp.NAME]
	ids     map[string]string // file extension → LSP languageId
	command []string          // the default server command
}

var languages = []language{
	{"go", map[string]string{".go": "go"}, []string{"gopls"}},
	{"python", map[string]string{".py": "python", ".pyi": "python"}, []string{"pyright-langserver", "--stdio"}},
	{"typescript", map[string]string{".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
		".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact"},
		[]string{"typescript-language-server", "--stdio"}},
	{"rust", map[string]string{".rs": "rust"}, []string{"rust-analyzer"}},
	{"c", map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp"},
		[]string{"clangd"}},
}

// languageOf returns the language of a file and its languageId.
func languageOf(path string) (*language, string) {
	ext := strings.ToLower(filepath.Ext(path))
	for i := range languages {
		if id, ok := languages[i].ids[ext]; ok {
			return &languages[i], id
		}
	}
	return nil, ""
}

// Server configures one language's server ([lsp.NAME] in config.toml).
type Server struct {
	// Command replaces the default command (argv; the first word is looked
	// up in PATH).
	Command []string
	// Disabled turns the language's diagnostics off.
	Disabled bool
}

// Config tunes a Manager. The zero value checks every language whose default
// server is installed, waiting DefaultWait.
type Config struct {
	// Off turns diagnostics off altogether.
	Off bool
	// Wait bounds one check (0: DefaultWait).
	Wait time.Duration
	// Servers override the default per language, by name (go, python,
	// typescript, rust, c).
	Servers map[string]Server
	// Environ is the servers' base environment (nil: dsh's), from which
	// credential-looking variables are removed.
	Environ []string
	// Trust says whether the servers may start (nil: never).
	Trust *Trust
	// Sandbox confines the servers as it does the session's commands.
	Sandbox sandbox.Mode
}

// Report is what a check found for one file.
type Report struct {
	// Server names the server that checked the file ("gopls").
	Server string
	// Diagnostics are the file's errors and warnings, in position order, at
	// most MaxDiagnostics; More counts the rest.
	Diagnostics []card.Diagnostic
	More        int
	// Pending says the server did not answer within the bound (it may still
	// be starting): Diagnostics are then empty.
	Pending bool
	// Failed is why the server could not be used, if it could not.
	Failed string
}

// Manager runs a workspace's language servers, one per language, started on
// first use and kept until Close.
type Manager struct {
	root string
	cfg  Config

	mu      sync.Mutex
	clients map[string]*client // by language name; nil: not installed
	closed  bool
}

// NewManager returns the manager of the workspace at root (an absolute path).
func NewManager(root string, cfg Config) *Manager {
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	return &Manager{root: root, cfg: cfg, clients: map[string]*client{}}
}

// Wait is the bound of one check.
func (m *Manager) Wait() time.Duration { return m.cfg.Wait }

// Check gives the server of path's language the file's new content and
// waits, at most the configured bound, for its diagnostics of the file. It
// returns nil when no server checks files like path (an unknown language,
// diagnostics off, the server disabled or not installed).
func (m *Manager) Check(ctx context.Context, path string, content []byte) *Report {
	c := m.client(path)
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Wait)
	defer cancel()
	return c.check(ctx, path, string(content))
}

// Checks reports whether a server is configured and installed for path's
// language, without starting it.
func (m *Manager) Checks(path string) bool {
	lang, _ := languageOf(path)
	if lang == nil || m.cfg.Off {
		return false
	}
	m.mu.Lock()
	c, started := m.clients[lang.name]
	m.mu.Unlock()
	if started {
		return c != nil
	}
	_, _, ok := m.command(lang)
	return ok
}

// client returns the running (or starting) server for path, starting it if
// needed; nil when there is none.
func (m *Manager) client(path string) *client {
	lang, id := languageOf(path)
	if lang == nil || m.cfg.Off {
		return nil
	}
	if !m.cfg.Trust.Trusted() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	if c, ok := m.clients[lang.name]; ok {
		if c != nil {
			c.ids[filepath.Ext(path)] = id
		}
		return c
	}
	bin, args, ok := m.command(lang)
	if !ok {
		m.clients[lang.name] = nil
		return nil
	}
	c := startClient(m.root, lang.name, bin, args, serverEnv(m.environ(), m.root), m.policy())
	c.ids[filepath.Ext(path)] = id
	m.clients[lang.name] = c
	return c
}

// command is the server command for lang, if it is enabled and installed.
func (m *Manager) command(lang *language) (string, []string, bool) {
	s := m.cfg.Servers[lang.name]
	if s.Disabled || m.cfg.Off {
		return "", nil, false
	}
	argv := lang.command
	if len(s.Command) > 0 {
		argv = s.Command
	}
	bin, ok := lookPath(argv[0], m.environ(), m.root)
	if !ok {
		return "", nil, false
	}
	return bin, argv[1:], true
}

// serverName names lang's server for the user: its command's base name.
func (m *Manager) serverName(lang *language) string {
	argv := lang.command
	if s := m.cfg.Servers[lang.name]; len(s.Command) > 0 {
		argv = s.Command
	}
	return filepath.Base(argv[0])
}

// policy is the servers' sandbox, the one the session's commands get; nil
// when they run unconfined.
func (m *Manager) policy() *sandbox.Policy {
	return sandbox.NewPolicy(m.cfg.Sandbox, m.root, getenvOf(m.environ()))
}

func (m *Manager) environ() []string {
	if m.cfg.Environ != nil {
		return m.cfg.Environ
	}
	return os.Environ()
}

// Known returns the errors and warnings the running servers last reported
// for files under dir (an absolute path), by path and position: the files
// checked in this session, and whatever else a server reports on its own
// (gopls: its workspace's packages). It starts no server.
func (m *Manager) Known(dir string) []card.Diagnostic {
	m.mu.Lock()
	var cs []*client
	for _, c := range m.clients {
		if c != nil {
			cs = append(cs, c)
		}
	}
	m.mu.Unlock()
	var out []card.Diagnostic
	for _, c := range cs {
		out = append(out, c.known(dir)...)
	}
	slices.SortFunc(out, func(a, b card.Diagnostic) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return out
}

// Close shuts every server down (shutdown, exit, then SIGTERM and SIGKILL)
// and returns once they and everything they started are gone.
func (m *Manager) Close() error { return m.end(false) }

// Kill ends every server at once: the exit path.
func (m *Manager) Kill() error { return m.end(true) }

func (m *Manager) end(now bool) error {
	m.mu.Lock()
	m.closed = true
	var cs []*client
	for _, c := range m.clients {
		if c != nil {
			cs = append(cs, c)
		}
	}
	m.clients = map[string]*client{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.stop(now) })
	}
	wg.Wait()
	return nil
}

// Pids returns the process groups of the running servers, for tests that
// prove they end.
func (m *Manager) Pids() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for _, c := range m.clients {
		if c != nil {
			if pg := c.pgid(); pg > 0 {
				out = append(out, pg)
			}
		}
	}
	slices.Sort(out)
	return out
}

// errStopped is a check on a server that has ended.
var errStopped = errors.New("the language server stopped")

// failed is a check that could not be made, and why: bounded, as it may quote
// the server.
func failed(server string, err error) *Report {
	return &Report{Server: server, Failed: clip(fmt.Sprintf("%s: %v", server, err), maxFailed)}
}
