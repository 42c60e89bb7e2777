package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/mcp"
	"github.com/dsh-dev/dsh/internal/plugin"
	"github.com/dsh-dev/dsh/internal/secretenv"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// maxClaudeJSON bounds what is read of ~/.claude.json, which Claude Code
// also keeps its projects' history in.
const maxClaudeJSON = 32 << 20

// maxMCPJSON bounds a project's .mcp.json.
const maxMCPJSON = 1 << 20

// claudeMCP are the MCP servers Claude Code would start in the project at
// root, in its order of precedence: the project's own in ~/.claude.json
// (claude mcp add's default, local scope), the project's .mcp.json (project
// scope, the repository's: only once the user trusts the project), then the
// user's in ~/.claude.json (user scope).
func claudeMCP(root string, getenv func(string) string, trusted bool, declined []string) (servers []mcp.ServerConfig, from map[string]string, notices []string) {
	var local, user []mcp.ServerConfig
	var off, offJSON []string // the servers the user turned off, and .mcp.json's they declined
	if path := claudehome.JSON(getenv); path != "" {
		f, notice := readClaudeJSON(path)
		if notice != "" {
			notices = append(notices, notice)
		}
		read := func(doc jsontext.Value, what string) []mcp.ServerConfig {
			if len(doc) == 0 {
				return nil
			}
			s, err := plugin.MCPFile(doc, "", "", getenv)
			if err != nil {
				notices = append(notices, fmt.Sprintf("%s: %s: %v", path, what, err))
			}
			return s
		}
		user = read(f.MCPServers, "mcpServers")
		p, ok := f.Projects[root]
		if real, err := filepath.EvalSymlinks(root); !ok && err == nil {
			p = f.Projects[real]
		}
		local = read(p.MCPServers, "projects."+root+".mcpServers")
		off = append(off, p.Disabled...)
		offJSON = append(offJSON, p.DisabledJSON...)
	}
	offJSON = append(offJSON, declined...)
	var project []mcp.ServerConfig
	b, more, err := workspace.ReadProjectFile(root, ".mcp.json", maxMCPJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err == nil && more:
		notices = append(notices, fmt.Sprintf(".mcp.json is larger than %d KiB: its MCP servers are not started", maxMCPJSON>>10))
	case err != nil:
		notices = append(notices, fmt.Sprintf("%v: its MCP servers are not started", err))
	default:
		// The repository's file reads no secret dsh keeps from the project's
		// commands (DSH_KEEP_ENV hands one over): a server it names would
		// otherwise get the user's keys.
		kept := KeepEnv(getenv)
		var withheld []string
		plain := func(k string) string {
			v := getenv(k)
			if v != "" && secretenv.Secret(k, v) && !slices.Contains(kept, k) {
				withheld = append(withheld, k)
				return ""
			}
			return v
		}
		project, err = plugin.MCPFile(b, "", "", plain)
		if len(withheld) > 0 && err == nil && trusted {
			slices.Sort(withheld)
			notices = append(notices, fmt.Sprintf(".mcp.json names %s, which dsh keeps from the project's commands: its servers get them empty (DSH_KEEP_ENV hands them over)",
				strings.Join(slices.Compact(withheld), ", ")))
		}
		switch {
		case err != nil:
			notices = append(notices, fmt.Sprintf(".mcp.json: %v: its MCP servers are not started", err))
		case !trusted && len(project) > 0:
			notices = append(notices, "MCP servers of .mcp.json ignored: a project may not run commands unless you trust it "+
				"(the chat asks; or list it in trusted_projects in the user's file)")
			project = nil
		}
	}
	project = slices.DeleteFunc(project, func(s mcp.ServerConfig) bool { return slices.Contains(offJSON, s.Name) })
	from = map[string]string{}
	json := claudehome.JSON(getenv)
	for _, l := range []struct {
		servers []mcp.ServerConfig
		where   string
	}{{user, json + " (user scope)"}, {project, filepath.Join(root, ".mcp.json")}, {local, json + " (local scope)"}} {
		for _, s := range l.servers {
			from[s.Name] = l.where // the last stands, as the first server by name does below
		}
	}
	all := firstByName(local, project, user)
	return slices.DeleteFunc(all, func(s mcp.ServerConfig) bool { return slices.Contains(off, s.Name) }), from, notices
}

// claudeJSON is what dsh takes of a .claude.json.
type claudeJSON struct {
	MCPServers jsontext.Value           `json:"mcpServers"`
	Projects   map[string]claudeProject `json:"projects"`
}

type claudeProject struct {
	MCPServers jsontext.Value `json:"mcpServers"`
	// Turned off with /mcp disable, and .mcp.json's the user declined
	// (older versions kept those here).
	Disabled     []string `json:"disabledMcpServers"`
	DisabledJSON []string `json:"disabledMcpjsonServers"`
}

// claudeJSONs keeps the last .claude.json read, by its file's identity:
// Claude Code keeps its projects' history there too (megabytes, 9 ms to
// read for 5 MB), and an editor's dsh resolves settings for every session.
var claudeJSONs struct {
	sync.Mutex
	path   string
	fi     os.FileInfo
	f      claudeJSON
	notice string
}

// readClaudeJSON reads the .claude.json at path, or says why not.
func readClaudeJSON(path string) (claudeJSON, string) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return claudeJSON{}, ""
	}
	c := &claudeJSONs
	c.Lock()
	defer c.Unlock()
	if err == nil && c.fi != nil && c.path == path && os.SameFile(fi, c.fi) && fi.Size() == c.fi.Size() && fi.ModTime().Equal(c.fi.ModTime()) {
		return c.f, c.notice
	}
	var f claudeJSON
	var notice string
	b, more, err := workspace.ReadOwnFile(path, maxClaudeJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err == nil && more:
		notice = fmt.Sprintf("%s is larger than %d MiB: its MCP servers are not started", path, maxClaudeJSON>>20)
	case err != nil:
		notice = fmt.Sprintf("%v: its MCP servers are not started", err)
	default:
		if err := json.Unmarshal(b, &f); err != nil {
			f, notice = claudeJSON{}, fmt.Sprintf("%s: %v: its MCP servers are not started", path, err)
		}
	}
	c.path, c.fi, c.f, c.notice = path, fi, f, notice
	return f, notice
}

// firstByName joins lists of servers, a name's first server standing.
func firstByName(lists ...[]mcp.ServerConfig) []mcp.ServerConfig {
	seen := map[string]bool{}
	var out []mcp.ServerConfig
	for _, l := range lists {
		for _, s := range l {
			if !seen[s.Name] {
				seen[s.Name] = true
				out = append(out, s)
			}
		}
	}
	return out
}
