// Package plugin finds Claude Code plugins — folders with a
// .claude-plugin/plugin.json manifest beside commands/, agents/, skills/,
// hooks/hooks.json and .mcp.json — where Claude Code installs them
// (~/.claude/plugins, its installed_plugins.json, the enabledPlugins of its
// settings) and where dsh keeps its own (dsh plugin add), and installs,
// removes, enables and disables dsh's own, from a folder, a git URL or a
// marketplace (.claude-plugin/marketplace.json).
//
// A plugin's files are the user's (installed by them), read capped. What a
// plugin runs — its hooks and MCP servers — is the caller's to gate: a
// plugin the project enables or installs for itself (Project) runs only in a
// project the user trusts, as the project's own hooks do.
package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// maxFile bounds every JSON file a plugin, a marketplace or Claude Code's
// plugin registry provides.
const maxFile = 1 << 20

// Plugin is one plugin found.
type Plugin struct {
	Name    string // the manifest's: the namespace of its commands, skills and agents
	ID      string // name@marketplace, or the name of one added from a folder or a URL
	Root    string // its folder (absolute)
	Version string
	// From says where it is installed: "dsh" (dsh plugin add) or "claude"
	// (Claude Code's installed_plugins.json).
	From string
	// Project says the project enabled it or installed it for itself: its
	// hooks and MCP servers run only once the user trusts the project.
	Project bool
	Enabled bool
	m       manifest
}

// manifest is .claude-plugin/plugin.json: its custom paths supplement the
// default folders (commands, agents, skills); hooks and mcpServers may be a
// path, a list of paths or the configuration itself.
type manifest struct {
	Name       string          `json:"name"`
	Version    string          `json:"version"`
	Commands   paths           `json:"commands"`
	Agents     paths           `json:"agents"`
	Skills     paths           `json:"skills"`
	Hooks      json.RawMessage `json:"hooks"`
	MCPServers json.RawMessage `json:"mcpServers"`
}

// paths is a manifest field that is one path or a list of them.
type paths []string

func (p *paths) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*p = paths{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("want a path or a list of paths")
	}
	*p = many
	return nil
}

// validName is Claude Code's rule for plugin names: kebab-case.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+([-_.][a-z0-9]+)*$`) })

// ManifestPath is a plugin folder's manifest, relative to it.
const ManifestPath = ".claude-plugin/plugin.json"

// Load reads the plugin in dir.
func Load(dir string) (Plugin, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Plugin{}, err
	}
	b, err := readOwn(filepath.Join(abs, filepath.FromSlash(ManifestPath)))
	if err != nil {
		return Plugin{}, fmt.Errorf("%s is not a plugin: %w", dir, err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Plugin{}, fmt.Errorf("%s: %w", filepath.Join(abs, ManifestPath), err)
	}
	if !validName().MatchString(m.Name) {
		return Plugin{}, fmt.Errorf("%s: name %q: want lowercase letters, digits and hyphens", filepath.Join(abs, ManifestPath), m.Name)
	}
	return Plugin{Name: m.Name, ID: m.Name, Root: abs, Version: m.Version, m: m}, nil
}

// readOwn reads a file of the user's own, capped.
func readOwn(path string) ([]byte, error) {
	b, more, err := workspace.ReadOwnFile(path, maxFile)
	if err != nil {
		return nil, err
	}
	if more {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFile)
	}
	return b, nil
}

// inside resolves rel (the manifest's "./x") inside the plugin's folder; a
// path that leaves it is refused.
func (p Plugin) inside(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("plugin %s: %s is outside the plugin's folder", p.Name, rel)
	}
	return filepath.Join(p.Root, clean), nil
}

// dirs are the default folder def (when it exists) and the manifest's paths.
func (p Plugin) dirs(def string, custom paths) ([]string, []error) {
	var out []string
	var errs []error
	if fi, err := os.Stat(filepath.Join(p.Root, def)); err == nil && fi.IsDir() {
		out = append(out, filepath.Join(p.Root, def))
	}
	for _, c := range custom {
		path, err := p.inside(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !containsPath(out, path) {
			out = append(out, path)
		}
	}
	return out, errs
}

func containsPath(list []string, p string) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// CommandPaths are its command folders (and command files the manifest names).
func (p Plugin) CommandPaths() ([]string, []error) { return p.dirs("commands", p.m.Commands) }

// AgentPaths are its agent folders.
func (p Plugin) AgentPaths() ([]string, []error) { return p.dirs("agents", p.m.Agents) }

// SkillPaths are its folders of skill folders.
func (p Plugin) SkillPaths() ([]string, []error) { return p.dirs("skills", p.m.Skills) }

// HookDoc is a hooks configuration of a plugin: hooks/hooks.json, a file the
// manifest names, or the manifest's own hooks object. Its JSON has Claude
// Code's settings shape ({"hooks": {EVENT: [...]}}).
type HookDoc struct {
	Source string
	JSON   []byte
}

// Hooks are its hooks configurations; a missing hooks/hooks.json is none.
func (p Plugin) Hooks() ([]HookDoc, []error) {
	var out []HookDoc
	var errs []error
	def := filepath.Join(p.Root, "hooks", "hooks.json")
	if b, err := readOwn(def); err == nil {
		out = append(out, HookDoc{def, b})
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	files, inline, err := fileOrInline(p.m.Hooks)
	if err != nil {
		return out, append(errs, fmt.Errorf("plugin %s: hooks: %w", p.Name, err))
	}
	if inline != nil {
		out = append(out, HookDoc{filepath.Join(p.Root, ManifestPath), inline})
	}
	for _, f := range files {
		path, err := p.inside(f)
		if err == nil && path == def {
			continue
		}
		var b []byte
		if err == nil {
			b, err = readOwn(path)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, HookDoc{path, b})
	}
	return out, errs
}

// fileOrInline reads a manifest field that is a path, a list of paths or an
// object (returned as it is).
func fileOrInline(raw json.RawMessage) (files []string, inline []byte, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	var ps paths
	if ps.UnmarshalJSON(raw) == nil {
		return ps, nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, nil, errors.New("want a path, a list of paths or an object")
	}
	return nil, raw, nil
}

// mcpServer is a server of Claude Code's .mcp.json.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// MCPServers are its MCP servers (.mcp.json and the manifest's mcpServers),
// named plugin_PLUGIN_SERVER so their tools are mcp__plugin_PLUGIN_SERVER__TOOL
// as in Claude Code. ${CLAUDE_PLUGIN_ROOT} is the plugin's folder; other
// ${VAR} and ${VAR:-default} are read through getenv.
func (p Plugin) MCPServers(getenv func(string) string) ([]mcp.ServerConfig, []error) {
	var docs [][]byte
	var errs []error
	if b, err := readOwn(filepath.Join(p.Root, ".mcp.json")); err == nil {
		docs = append(docs, b)
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	files, inline, err := fileOrInline(p.m.MCPServers)
	if err != nil {
		errs = append(errs, fmt.Errorf("plugin %s: mcpServers: %w", p.Name, err))
	}
	if inline != nil {
		docs = append(docs, inline)
	}
	for _, f := range files {
		path, err := p.inside(f)
		var b []byte
		if err == nil && path != filepath.Join(p.Root, ".mcp.json") {
			b, err = readOwn(path)
			docs = append(docs, b)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	seen := map[string]bool{}
	var out []mcp.ServerConfig
	for _, d := range docs {
		servers, err := MCPFile(d, "plugin_"+p.Name+"_", p.Root, getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin %s: MCP servers: %w", p.Name, err))
			continue
		}
		for _, c := range servers {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out, errs
}

// MCPFile reads the MCP servers of a document in Claude Code's .mcp.json
// format ({"mcpServers": {...}}, or the servers' object itself: a plugin's
// manifest, a project's .mcp.json, ~/.claude.json's scopes), sorted by name,
// each named prefix+NAME. ${VAR} and ${VAR:-default} are read through
// getenv; ${CLAUDE_PLUGIN_ROOT} is pluginRoot, for a plugin's.
func MCPFile(doc []byte, prefix, pluginRoot string, getenv func(string) string) ([]mcp.ServerConfig, error) {
	servers, err := parseMCP(doc)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]mcp.ServerConfig, 0, len(names))
	for _, n := range names {
		s := servers[n]
		ex := func(v string) string { return expand(v, pluginRoot, getenv) }
		c := mcp.ServerConfig{Name: prefix + n, Type: s.Type, Command: ex(s.Command), URL: ex(s.URL)}
		for _, a := range s.Args {
			c.Args = append(c.Args, ex(a))
		}
		c.Env = expandMap(s.Env, ex)
		c.Headers = expandMap(s.Headers, ex)
		if c.Type == "" {
			c.Type = "stdio"
			if c.URL != "" {
				c.Type = "http"
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// parseMCP reads {"mcpServers": {...}} or the servers' object itself.
func parseMCP(b []byte) (map[string]mcpServer, error) {
	var wrapped struct {
		MCPServers map[string]mcpServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &wrapped); err == nil && wrapped.MCPServers != nil {
		return wrapped.MCPServers, nil
	}
	var bare map[string]mcpServer
	if err := json.Unmarshal(b, &bare); err != nil {
		return nil, err
	}
	return bare, nil
}

func expandMap(m map[string]string, ex func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ex(v)
	}
	return out
}

var envRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)
})

// expand replaces ${CLAUDE_PLUGIN_ROOT} with root (if any) and ${VAR}, ${VAR:-default}
// with the environment's, as Claude Code expands a plugin's MCP servers.
func expand(s, root string, getenv func(string) string) string {
	return envRef().ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef().FindStringSubmatch(ref)
		if m[1] == "CLAUDE_PLUGIN_ROOT" && root != "" {
			return root
		}
		if v := getenv(m[1]); v != "" {
			return v
		}
		return m[3]
	})
}
