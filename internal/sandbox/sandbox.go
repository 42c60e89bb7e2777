// Package sandbox is the policy that confines shell commands: they may read
// everywhere but write only in the workspace (less what would run programs or
// instruct agents later), the system temp directory and caches of the
// workspace's own, and optionally not use the network. Package confine
// enforces it on the command's process, never on dsh.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

// Mode is the --sandbox setting.
type Mode string

// The modes.
const (
	Off        Mode = "off"
	On         Mode = "on"
	NetworkOff Mode = "network-off"
)

// String implements flag.Value.
func (m *Mode) String() string { return string(*m) }

// Set implements flag.Value.
func (m *Mode) Set(s string) error {
	switch Mode(s) {
	case Off, On, NetworkOff:
		*m = Mode(s)
		return nil
	}
	return fmt.Errorf("want on, off or network-off, got %q", s)
}

// Enabled reports whether commands run sandboxed in this mode.
func (m Mode) Enabled() bool { return m == On || m == NetworkOff }

// Policy is what a sandboxed command may do.
type Policy struct {
	// Write are the directories under which the command may create, change and
	// delete files; everything else is read-only.
	Write []string `json:"write"`
	// Network is whether TCP connect and bind are allowed, and sockets other
	// than TCP and unix ones.
	Network bool `json:"network"`
	// Protect are paths in the workspace that stay read-only.
	Protect []string `json:"protect,omitempty"`
	// Env points the command's caches at the workspace's own (see caches).
	Env []string `json:"env,omitempty"`
	// Hide are the real paths of the user's dsh files that a command may not
	// read (see secrets).
	Hide []string `json:"hide,omitempty"`
	// Proxy, if set, is the only way the command reaches the network: it runs
	// in a network namespace of its own, with only loopback, where the proxy
	// listens (see Filter).
	Proxy *netproxy.Proxy `json:"-"`
}

// Filter sends the network of a policy that has one through proxy, when its
// rules restrict anything.
func (p *Policy) Filter(proxy *netproxy.Proxy) {
	if p == nil || !p.Network || proxy == nil || !proxy.Rules().Filtered() {
		return
	}
	p.Proxy = proxy
	p.Env = append(p.Env, netproxy.Env()...)
}

// protected are the workspace's paths a command could use to run programs
// later outside the sandbox (git runs core.fsmonitor, hooks and submodules'
// configs from a plain git status) or to instruct dsh and other agents.
var protected = []string{
	".git/config", ".git/config.worktree", ".git/hooks", ".git/modules", ".gitmodules",
	".dsh", ".claude", ".agents", ".mcp.json", "AGENTS.md", "CLAUDE.md",
}

// caches are the variables that point tools at their caches, and where each
// goes in the workspace's own cache directory. A command writes only there: a
// poisoned module or build result must not change what runs outside the
// workspace. Tools that read XDG_CACHE_HOME (pnpm, and the defaults of most
// of these) follow it there too. Go modules already in the user's module cache
// are read from it, as a file proxy, rather than downloaded again.
var caches = []struct{ env, dir string }{
	{"XDG_CACHE_HOME", ""},
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"PIP_CACHE_DIR", "pip"},
	{"UV_CACHE_DIR", "uv"},
	{"CARGO_HOME", "cargo"},
	{"GOLANGCI_LINT_CACHE", "golangci-lint"},
	{"STATICCHECK_CACHE", "staticcheck"},
}

// NewPolicy is the policy of mode for commands in workspace, with the temp
// directory and caches taken from getenv (the commands' environment). It is nil
// when mode is Off.
func NewPolicy(mode Mode, workspace string, getenv func(string) string) *Policy {
	if !mode.Enabled() {
		return nil
	}
	workspace = filepath.Clean(workspace)
	p := &Policy{Network: mode != NetworkOff}
	add := func(dir string) {
		if filepath.IsAbs(dir) && !slices.Contains(p.Write, filepath.Clean(dir)) {
			p.Write = append(p.Write, filepath.Clean(dir))
		}
	}
	add(workspace)
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	add(tmp)
	add("/dev/shm")
	if fi, err := os.Lstat(filepath.Join(workspace, ".git")); err == nil && fi.Mode().IsRegular() {
		p.Protect = append(p.Protect, filepath.Join(workspace, ".git")) // a worktree's or submodule's pointer
	}
	for _, name := range protected {
		p.Protect = append(p.Protect, filepath.Join(workspace, name))
	}
	if root := cacheRoot(workspace, getenv); root != "" {
		add(root)
		for _, c := range caches {
			p.Env = append(p.Env, c.env+"="+filepath.Join(root, c.dir))
		}
		p.Env = append(p.Env, "GOPROXY="+goproxy(getenv))
	}
	p.Hide = p.secrets(getenv)
	return p
}

// secrets are the user's dsh folder ($XDG_CONFIG_HOME/dsh, else
// ~/.config/dsh), symlinks resolved: it holds the API keys dsh keeps
// (credentials) and the user's config.toml, whose MCP servers' headers and
// environment hold tokens. A command reading it would hand them to the model.
// When a writable folder lies inside it (dsh started there), the folder stays
// and its two secret files are hidden instead.
func (p *Policy) secrets(getenv func(string) string) []string {
	dir := ""
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		dir = filepath.Join(x, "dsh")
	} else if h := getenv("HOME"); filepath.IsAbs(h) {
		dir = filepath.Join(h, ".config", "dsh")
	}
	if dir == "" {
		return nil
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil // nothing there to hide
	}
	if !slices.ContainsFunc(p.Write, func(w string) bool { return w == dir || strings.HasPrefix(w, dir+"/") }) {
		return []string{dir}
	}
	var files []string
	for _, name := range []string{"credentials", "config.toml"} {
		if f, err := filepath.EvalSymlinks(filepath.Join(dir, name)); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// cacheRoot is the workspace's own cache directory, "" without a home. It is
// created so that Landlock can grant it.
func cacheRoot(workspace string, getenv func(string) string) string {
	base := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		if home := getenv("HOME"); filepath.IsAbs(home) {
			base = filepath.Join(home, ".cache")
		} else {
			return ""
		}
	}
	sum := sha256.Sum256([]byte(workspace))
	root := filepath.Join(base, "dsh", "sandbox", filepath.Base(workspace)+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(root, 0o700); err != nil {
		return ""
	}
	return root
}

// goproxy puts the user's module cache, read-only, before the proxy the
// commands would use.
func goproxy(getenv func(string) string) string {
	proxy := getenv("GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	mod := getenv("GOMODCACHE")
	if mod == "" {
		gopath, _, _ := strings.Cut(getenv("GOPATH"), string(os.PathListSeparator))
		if gopath == "" && getenv("HOME") != "" {
			gopath = filepath.Join(getenv("HOME"), "go")
		}
		mod = filepath.Join(gopath, "pkg", "mod")
	}
	download := filepath.Join(mod, "cache", "download")
	if !filepath.IsAbs(download) {
		return proxy
	}
	if fi, err := os.Stat(download); err != nil || !fi.IsDir() {
		return proxy
	}
	return "file://" + download + "," + proxy
}

// Allows reports whether the policy lets a command write at path.
func (p *Policy) Allows(path string) bool {
	path = filepath.Clean(path)
	if slices.Contains(confine.WritableDevices, path) {
		return true
	}
	for _, q := range p.Protect {
		if path == q || strings.HasPrefix(path, q+"/") {
			return false
		}
	}
	for _, dir := range p.Write {
		if path == dir || strings.HasPrefix(path, dir+"/") || dir == "/" {
			return true
		}
	}
	return false
}

// Describe says in a sentence what a command in the sandbox may do.
func (p *Policy) Describe() string {
	s := "Sandboxed commands can read everywhere but write only in " + strings.Join(p.Write, ", ") +
		" (not git's config and hooks, .dsh, .claude, .agents, .mcp.json, AGENTS.md or CLAUDE.md)"
	switch {
	case !p.Network:
		s += ", and cannot open network connections"
	case p.Proxy != nil:
		s += ", and reach the network only through dsh's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), and only the hosts network.allowed_domains and denied_domains allow"
	}
	if len(p.Hide) > 0 {
		s += "; dsh's own keys and settings read as empty"
	}
	return s + "."
}
