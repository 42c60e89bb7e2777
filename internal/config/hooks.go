package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Hook is one hook: a [[hooks.EVENT]] table of a config.toml, or an entry of
// a Claude Code settings.json's (or a plugin's hooks/hooks.json) hooks block,
// which has the same shape:
//
//	[[hooks.PreToolUse]]
//	matcher = "Bash"
//	hooks = [{ type = "command", command = "~/bin/check.sh", timeout = 10 }]
type Hook struct {
	Event   string // one of HookEvents
	Matcher string
	// Type is command (Command runs), prompt (Prompt asks the session's
	// model) or http (the input is POSTed to URL, with Headers, whose
	// $VARS are those of AllowedEnvVars).
	Type           string
	Command        string
	Prompt         string
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	Timeout        time.Duration // 0: the default
	Source         string        // the file it came from
	// Env are variables the hook runs with besides the commands' own: a
	// plugin's hooks get its CLAUDE_PLUGIN_ROOT, as in Claude Code.
	Env []string
}

// HookEvents are the events dsh runs hooks for: those of Claude Code's that
// have a counterpart in dsh.
var HookEvents = []string{"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "Notification",
	"UserPromptSubmit", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionStart", "SessionEnd"}

// hookTypes are the kinds of hooks dsh runs.
var hookTypes = []string{"command", "prompt", "http"}

// maxHookTimeout keeps a hook from holding a turn for longer than a command
// may; a longer one is cut to it, with a notice.
const maxHookTimeout = 10 * time.Minute

type rawHookGroup struct {
	Matcher string    `toml:"matcher" json:"matcher"`
	Hooks   []rawHook `toml:"hooks" json:"hooks"`
}

type rawHook struct {
	Type           string            `toml:"type" json:"type"`
	Command        string            `toml:"command" json:"command"`
	Prompt         string            `toml:"prompt" json:"prompt"`
	URL            string            `toml:"url" json:"url"`
	Headers        map[string]string `toml:"headers" json:"headers"`
	AllowedEnvVars []string          `toml:"allowedEnvVars" json:"allowedEnvVars"`
	Timeout        any               `toml:"timeout" json:"timeout"` // seconds, an integer or not
}

// hookTable validates a file's hooks. strict (dsh's own files) refuses what
// dsh does not run; otherwise (Claude Code's files, which hold more than dsh
// knows) it is skipped with a note. A timeout above what dsh allows is cut to
// it, with a note, either way: Claude Code takes it.
func hookTable(groups map[string][]rawHookGroup, source string, strict bool) (hs []Hook, notes []string, err error) {
	at := func(s string) string {
		if source == "" {
			return s
		}
		return source + ": " + s
	}
	for _, event := range sortedKeys(groups) {
		if !slices.Contains(HookEvents, event) {
			if strict {
				return nil, nil, fmt.Errorf("hooks.%s: dsh runs hooks for %s only", event, strings.Join(HookEvents, ", "))
			}
			notes = append(notes, at(fmt.Sprintf("%s hooks ignored: dsh does not run them", event)))
			continue
		}
		for i, g := range groups[event] {
			if g.Matcher != "" && g.Matcher != "*" {
				if _, err := regexp.Compile(g.Matcher); err != nil {
					if strict {
						return nil, nil, fmt.Errorf("hooks.%s[%d].matcher: %w", event, i, err)
					}
					notes = append(notes, at(fmt.Sprintf("hooks.%s[%d] ignored: its matcher: %v", event, i, err)))
					continue
				}
			}
			for j, h := range g.Hooks {
				where := fmt.Sprintf("hooks.%s[%d].hooks[%d]", event, i, j)
				hk, note, err := h.hook(event, where)
				switch {
				case err != nil && strict:
					return nil, nil, err
				case err != nil:
					notes = append(notes, at(fmt.Sprintf("%s ignored: %v", where, err)))
					continue
				case note != "":
					notes = append(notes, at(note))
				}
				hk.Matcher, hk.Source = g.Matcher, source
				hs = append(hs, hk)
			}
		}
	}
	return hs, notes, nil
}

// hook checks one entry; note says what was changed to run it.
func (h rawHook) hook(event, where string) (Hook, string, error) {
	typ := h.Type
	if typ == "" {
		typ = "command"
	}
	hk := Hook{Event: event, Type: typ}
	switch typ {
	case "command":
		if strings.TrimSpace(h.Command) == "" {
			return Hook{}, "", fmt.Errorf("%s.command: want the command to run", where)
		}
		hk.Command = h.Command
	case "prompt":
		if strings.TrimSpace(h.Prompt) == "" {
			return Hook{}, "", fmt.Errorf("%s.prompt: want the question for the model", where)
		}
		hk.Prompt = h.Prompt
	case "http":
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Hook{}, "", fmt.Errorf("%s.url: want an http:// or https:// URL, got %q", where, h.URL)
		}
		hk.URL, hk.Headers, hk.AllowedEnvVars = h.URL, h.Headers, h.AllowedEnvVars
	default:
		return Hook{}, "", fmt.Errorf("%s.type: want one of %s, got %q", where, strings.Join(hookTypes, ", "), h.Type)
	}
	d, clamped, err := hookTimeout(h.Timeout)
	if err != nil {
		return Hook{}, "", fmt.Errorf("%s.timeout: %w", where, err)
	}
	hk.Timeout = d
	note := ""
	if clamped {
		note = fmt.Sprintf("%s.timeout: %v seconds is more than dsh waits for a hook; it waits %d", where, h.Timeout, int(maxHookTimeout.Seconds()))
	}
	return hk, note, nil
}

// hookTimeout reads a timeout in seconds; clamped says it was above
// maxHookTimeout, which it is cut to.
func hookTimeout(v any) (d time.Duration, clamped bool, err error) {
	var s float64
	switch t := v.(type) {
	case nil:
		return 0, false, nil
	case int64:
		s = float64(t)
	case float64:
		s = t
	default:
		return 0, false, errors.New("want a number of seconds")
	}
	if s <= 0 || math.IsNaN(s) {
		return 0, false, fmt.Errorf("want a number of seconds above 0, got %v", v)
	}
	if s > maxHookTimeout.Seconds() {
		return maxHookTimeout, true, nil
	}
	return time.Duration(s * float64(time.Second)), false, nil
}

// claudeSettings is what dsh reads of a Claude Code settings.json, or of a
// plugin's hooks/hooks.json: its hooks.
type claudeSettings struct {
	Hooks map[string][]rawHookGroup `json:"hooks"`
}

// ClaudeHooks reads the hooks of a Claude Code settings file or a plugin's
// hooks/hooks.json (b, read from source) as Claude Code does: what dsh does
// not run is left out, named in notes; err is a file that is not JSON.
func ClaudeHooks(b []byte, source string) (hs []Hook, notes []string, err error) {
	var s claudeSettings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	hs, notes, _ = hookTable(s.Hooks, source, false) // not strict: no error
	return hs, notes, nil
}

// readClaude reads a Claude Code settings file: the user's own (root "") or
// a project's, inside root, capped. A missing file is nil.
func readClaude(path, root string) ([]byte, error) {
	var b []byte
	var more bool
	var err error
	if root != "" {
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil {
			return nil, fmt.Errorf("reading %s: %w", path, rerr)
		}
		b, more, err = workspace.ReadProjectFile(root, rel, maxFileSize)
	} else {
		b, more, err = readCapped(path, maxFileSize)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	case more:
		return nil, fmt.Errorf("%s: larger than %d bytes; not a settings file", path, maxFileSize)
	}
	return b, nil
}

// claudeProjectFiles are the project's Claude Code settings dsh reads.
var claudeProjectFiles = []string{"settings.json", "settings.local.json"}

// trustSum is the project file's hash sum (sum, "" without one), made to
// cover what trusting the project lets run: its Claude Code settings and
// .mcp.json when it has any, and the scripts in the workspace that the hooks
// of either (hooks are the config.toml's) and the MCP servers name. Trusting
// the project is trusting all of them, and a change of any asks again.
// Without any, sum is unchanged. settings says it has Claude Code settings.
func trustSum(sum, root string, hooks []Hook) (_ string, settings bool) {
	h := sha256.New()
	found := false
	var commands []string
	for _, hk := range hooks {
		commands = append(commands, hk.Command)
	}
	for _, name := range claudeProjectFiles {
		b, _, err := workspace.ReadProjectFile(root, filepath.Join(".claude", name), maxFileSize)
		if err != nil {
			continue // a missing or unreadable file: claudeHooks says why when it matters
		}
		found, settings = true, true
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
		var s claudeSettings
		if json.Unmarshal(b, &s) == nil {
			for _, groups := range s.Hooks {
				for _, g := range groups {
					for _, hk := range g.Hooks {
						commands = append(commands, hk.Command)
					}
				}
			}
		}
	}
	// The project's MCP servers (Claude Code's .mcp.json), started once the
	// project is trusted: the file, and the scripts in the workspace its
	// servers run.
	if b, _, err := workspace.ReadProjectFile(root, ".mcp.json", maxFileSize); err == nil {
		found = true
		fmt.Fprintf(h, ".mcp.json %d\n", len(b))
		h.Write(b)
		var m struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if json.Unmarshal(b, &m) == nil {
			for _, s := range m.MCPServers {
				commands = append(commands, strings.Join(append([]string{s.Command}, s.Args...), " "))
			}
		}
	}
	for _, rel := range hookScripts(root, commands) {
		b, more, err := workspace.ReadProjectFile(root, rel, maxFileSize)
		if err != nil {
			continue // no such file, or not one a hook could run
		}
		found = true
		fmt.Fprintf(h, "script %s %d %v\n", rel, len(b), more)
		h.Write(b)
	}
	if !found {
		return sum, false
	}
	fmt.Fprintf(h, "config.toml %s\n", sum)
	return fmt.Sprintf("%x", h.Sum(nil)), settings
}

// maxHookWords bounds the words of hook commands looked up as files.
const maxHookWords = 256

// hookScripts are the files inside root that hook commands may name, relative
// to root, sorted: every word of a command (hooks run in root, with
// CLAUDE_PROJECT_DIR set to it), quotes dropped, that stays inside root.
// Words that name no file are left to the caller's read, which fails.
func hookScripts(root string, commands []string) []string {
	seen := map[string]bool{}
	n := 0
	for _, c := range commands {
		words := strings.FieldsFunc(c, func(r rune) bool { return strings.ContainsRune(" \t\n;&|()<>`", r) })
		for _, w := range words {
			if n++; n > maxHookWords {
				break
			}
			w = strings.NewReplacer(`"`, "", "'", "").Replace(w)
			for _, v := range []string{"${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"} {
				if rest, ok := strings.CutPrefix(w, v); ok {
					w = root + rest
				}
			}
			if w == "" || strings.ContainsAny(w, "$*?[~=") || strings.HasPrefix(w, "-") {
				continue
			}
			if filepath.IsAbs(w) {
				r, err := filepath.Rel(root, w)
				if err != nil {
					continue
				}
				w = r
			}
			w = filepath.Clean(w)
			if w == "." || w == ".." || strings.HasPrefix(w, "../") {
				continue
			}
			seen[w] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// claudeModes are dsh's modes for Claude Code's permissions.defaultMode.
var claudeModes = map[string]string{"default": "default", "acceptEdits": "accept-edits", "plan": "plan", "bypassPermissions": "bypass"}

// managedSettings is Claude Code's managed settings file, where an
// administrator sets policy for every user of the machine (a variable so
// that tests can point it elsewhere).
var managedSettings = func() string {
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	}
	return "/etc/claude-code/managed-settings.json"
}()

// claudeUserSettings is the user's Claude Code settings file ("" without
// HOME or CLAUDE_CONFIG_DIR).
func claudeUserSettings(getenv func(string) string) string {
	if c := claudehome.Dir(getenv); c != "" {
		return filepath.Join(c, "settings.json")
	}
	return ""
}

// loadClaude adds what dsh takes of Claude Code's settings files, each read
// once: their hooks and their permission rules. The administrator's managed
// settings and the user's always; the
// project's (.claude/settings.json and settings.local.json) with what trust
// allows: a repository's hooks are commands it would run, and its rules may
// only narrow.
func (c *Config) loadClaude(projectRoot string, trusted bool) {
	var modes []candidate // permissions.defaultMode, under dsh's own files' mode
	var hooks []Hook      // the files' hooks, unless one has disableAllHooks
	defer func() {
		c.layers["mode"] = append(modes, c.layers["mode"]...)
		if c.ClaudeHooksOff != "" {
			if len(hooks) > 0 {
				c.Notices = append(c.Notices, fmt.Sprintf("the hooks of Claude Code's settings are not run: %s has disableAllHooks", c.ClaudeHooksOff))
			}
			return
		}
		c.addHooks(hooks)
	}()
	add := func(path, root string) {
		b, err := readClaude(path, root)
		if err == nil && b != nil {
			var s struct {
				Permissions *RuleLists `json:"permissions"`
				NoHooks     bool       `json:"disableAllHooks"`
			}
			if err = json.Unmarshal(b, &s); err == nil {
				switch {
				case !s.NoHooks:
				case root != "" && !trusted:
					// The user's hooks may guard what the agent does.
					c.Notices = append(c.Notices, fmt.Sprintf("%s: disableAllHooks ignored: a project may not turn off your hooks unless you trust it", path))
				case c.ClaudeHooksOff == "":
					c.ClaudeHooksOff = path
				}
				c.addRules(s.Permissions, path, root != "", trusted || root == "")
				if s.Permissions != nil && s.Permissions.DisableBypass == "disable" && c.NoBypass == "" {
					c.NoBypass = path
				}
				if s.Permissions != nil && s.Permissions.DefaultMode != "" {
					m, ok := claudeModes[s.Permissions.DefaultMode]
					switch {
					case !ok:
						c.Notices = append(c.Notices, fmt.Sprintf("%s: permissions.defaultMode %q ignored: dsh has no such mode", path, s.Permissions.DefaultMode))
					case root != "" && !trusted && m != "default" && m != "plan":
						c.Notices = append(c.Notices, fmt.Sprintf("%s: permissions.defaultMode ignored: a project file may only choose the default or plan mode unless you trust it "+
							"(the chat asks; or list it in trusted_projects in the user's file)", path))
					default:
						modes = append(modes, candidate{m, path})
					}
				}
			} else {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
		if err != nil {
			// A file dsh cannot read (the user's or a repository's) must
			// not stop it from starting: Claude Code's settings hold much
			// dsh does not use.
			c.Notices = append(c.Notices, fmt.Sprintf("%v; its hooks are ignored, and its permission rules", err))
			return
		}
		if b == nil {
			return
		}
		hs, notes, err := ClaudeHooks(b, path)
		if err != nil {
			return // not JSON: said above
		}
		c.Notices = append(c.Notices, notes...)
		if len(hs) > 0 && root != "" && !trusted {
			c.Notices = append(c.Notices, fmt.Sprintf("%s: hooks ignored: a project may not run commands unless you trust it "+
				"(the chat asks; or list it in trusted_projects in the user's file)", path))
			return
		}
		hooks = append(hooks, hs...)
	}
	if path := claudeUserSettings(c.getenv); path != "" {
		add(path, "")
	}
	if projectRoot != "" {
		for _, name := range claudeProjectFiles {
			add(filepath.Join(projectRoot, ".claude", name), projectRoot)
		}
	}
	// Last: its defaultMode stands over the user's and the project's.
	add(managedSettings, "")
}

// addHooks adds hs, leaving out those already configured (the same event,
// matcher and command), as Claude Code runs a duplicate once.
func (c *Config) addHooks(hs []Hook) {
	for _, h := range hs {
		if !slices.ContainsFunc(c.Hooks, func(o Hook) bool {
			return o.Event == h.Event && o.Matcher == h.Matcher && o.Type == h.Type &&
				o.Command == h.Command && o.Prompt == h.Prompt && o.URL == h.URL
		}) {
			c.Hooks = append(c.Hooks, h)
		}
	}
}

// describeHooks shows the hooks set, by event: "PreToolUse Bash: ./check.sh; Stop: make test".
func describeHooks(hs []Hook) string {
	parts := make([]string, 0, len(hs))
	for _, h := range hs {
		at := h.Event
		if h.Matcher != "" {
			at += " " + h.Matcher
		}
		switch h.Type {
		case "prompt":
			parts = append(parts, at+": prompt "+strconv.Quote(h.Prompt))
		case "http":
			parts = append(parts, at+": POST "+h.URL)
		default:
			parts = append(parts, at+": "+h.Command)
		}
	}
	return strings.Join(parts, "; ")
}
