package config

import (
	"fmt"
	"strings"
	"time"
)

// LSP is the [lsp] table: the language servers that check the file tools'
// changes. Servers are by language (go, python, typescript, rust, c); a
// language absent here runs its default server when it is installed.
type LSP struct {
	// Wait bounds how long an edit waits for diagnostics (0: the default).
	Wait    time.Duration
	Servers map[string]LSPServer
}

// LSPServer is one [lsp.LANGUAGE] table.
type LSPServer struct {
	Command  []string // replaces the default command
	Disabled bool     // enabled = false
}

type rawLSP struct {
	Wait       *string       `toml:"wait"`
	Go         *rawLSPServer `toml:"go"`
	Python     *rawLSPServer `toml:"python"`
	TypeScript *rawLSPServer `toml:"typescript"`
	Rust       *rawLSPServer `toml:"rust"`
	C          *rawLSPServer `toml:"c"`
}

type rawLSPServer struct {
	Command []string `toml:"command"`
	Enabled *bool    `toml:"enabled"`
}

// maxLSPWait keeps a configured wait from stalling every edit.
const maxLSPWait = time.Minute

// lspTable validates [lsp].
func lspTable(r *rawLSP) (*LSP, error) {
	if r == nil {
		return nil, nil
	}
	l := &LSP{Servers: map[string]LSPServer{}}
	if r.Wait != nil {
		d, err := time.ParseDuration(*r.Wait)
		if err != nil || d <= 0 || d > maxLSPWait {
			return nil, fmt.Errorf("lsp.wait: want a duration such as \"3s\", at most %s, got %q", maxLSPWait, *r.Wait)
		}
		l.Wait = d
	}
	for name, s := range map[string]*rawLSPServer{"go": r.Go, "python": r.Python, "typescript": r.TypeScript, "rust": r.Rust, "c": r.C} {
		if s == nil {
			continue
		}
		if s.Command != nil && (len(s.Command) == 0 || strings.TrimSpace(s.Command[0]) == "") {
			return nil, fmt.Errorf("lsp.%s.command: want the server's argv, such as [\"gopls\"]", name)
		}
		l.Servers[name] = LSPServer{Command: s.Command, Disabled: s.Enabled != nil && !*s.Enabled}
	}
	return l, nil
}

// mergeLSP lays one file's [lsp] over the ones before it, a language at a time.
func (c *Config) mergeLSP(l *LSP, path string) {
	if l.Wait > 0 {
		c.LSP.Wait = l.Wait
	}
	for name, s := range l.Servers {
		if c.LSP.Servers == nil {
			c.LSP.Servers = map[string]LSPServer{}
		}
		c.LSP.Servers[name] = s
	}
	c.sources["lsp"] = joinSource(c.sources["lsp"], path)
}

// describe shows the language servers set: "wait 5s; go: gopls -remote=auto; python: off".
func (l LSP) describe() string {
	var parts []string
	if l.Wait > 0 {
		parts = append(parts, "wait "+l.Wait.String())
	}
	for _, name := range sortedKeys(l.Servers) {
		s := l.Servers[name]
		switch {
		case s.Disabled:
			parts = append(parts, name+": off")
		case len(s.Command) > 0:
			parts = append(parts, name+": "+strings.Join(s.Command, " "))
		}
	}
	return strings.Join(parts, "; ")
}
