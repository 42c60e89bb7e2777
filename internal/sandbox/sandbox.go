// Package sandbox is the policy that confines shell commands with Landlock: they
// may read everywhere but write only in the workspace, the system temp directory
// and the user's build caches, and optionally not use the network. The policy is
// applied to the command's process, never to dsh: see RestrictThread.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// Policy is what a sandboxed command may do. It travels to the process that
// applies it as JSON.
type Policy struct {
	// Write are the directories under which the command may create, change and
	// delete files; everything else is read-only.
	Write []string `json:"write"`
	// Network is whether TCP connect and bind are allowed.
	Network bool `json:"network"`
}

// caches are the build caches sandboxed commands may write, so that builds and
// installs keep working: each is the directory a variable names, or a default.
// Defaults may use $HOME, $XDG_CACHE_HOME (default $HOME/.cache), $GOPATH (its
// first element, default $HOME/go) and $CARGO_HOME (default $HOME/.cargo).
// Directories of installed binaries (GOPATH/bin, CARGO_HOME/bin) are left out on
// purpose: a command must not plant programs on the user's PATH.
var caches = []struct{ tool, env, def string }{
	{"Go build cache", "GOCACHE", "$XDG_CACHE_HOME/go-build"},
	{"Go module cache", "GOMODCACHE", "$GOPATH/pkg/mod"},
	{"Go checksum database", "", "$GOPATH/pkg/sumdb"},
	{"npm", "npm_config_cache", "$HOME/.npm"},
	{"yarn", "YARN_CACHE_FOLDER", "$XDG_CACHE_HOME/yarn"},
	{"pnpm", "", "$XDG_CACHE_HOME/pnpm"},
	{"pnpm store", "", "$HOME/.local/share/pnpm"},
	{"pip", "PIP_CACHE_DIR", "$XDG_CACHE_HOME/pip"},
	{"uv", "UV_CACHE_DIR", "$XDG_CACHE_HOME/uv"},
	{"cargo registry", "", "$CARGO_HOME/registry"},
	{"cargo git", "", "$CARGO_HOME/git"},
	{"Maven", "", "$HOME/.m2/repository"},
	{"golangci-lint", "GOLANGCI_LINT_CACHE", "$XDG_CACHE_HOME/golangci-lint"},
	{"staticcheck", "STATICCHECK_CACHE", "$XDG_CACHE_HOME/staticcheck"},
}

// writableDevices are the device files commands may open for writing.
var writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// NewPolicy is the policy of mode for commands in workspace, with the temp
// directory and caches taken from getenv (the commands' environment). It is nil
// when mode is Off.
func NewPolicy(mode Mode, workspace string, getenv func(string) string) *Policy {
	if !mode.Enabled() {
		return nil
	}
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
	vars := func(name string) string {
		v := getenv(name)
		if name == "GOPATH" {
			v, _, _ = strings.Cut(v, string(os.PathListSeparator))
		}
		if v != "" || name == "HOME" {
			return v
		}
		switch name {
		case "XDG_CACHE_HOME":
			return getenv("HOME") + "/.cache"
		case "GOPATH":
			return getenv("HOME") + "/go"
		case "CARGO_HOME":
			return getenv("HOME") + "/.cargo"
		}
		return ""
	}
	for _, c := range caches {
		dir := ""
		if c.env != "" {
			dir = getenv(c.env)
		}
		if dir == "" {
			if getenv("HOME") == "" && strings.Contains(c.def, "$") {
				continue // no home, no default
			}
			dir = os.Expand(c.def, vars)
		}
		add(dir)
	}
	return p
}

// Allows reports whether the policy lets a command write at path.
func (p *Policy) Allows(path string) bool {
	path = filepath.Clean(path)
	if slices.Contains(writableDevices, path) {
		return true
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
	s := "Sandboxed commands can read everywhere but write only in " + strings.Join(p.Write, ", ")
	if !p.Network {
		s += ", and cannot open network connections"
	}
	return s + "."
}
