package config

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Hook is one hook command: a [[hooks.EVENT]] table of a config.toml, or an
// entry of a Claude Code settings.json's hooks block, which has the same shape:
//
//	[[hooks.PreToolUse]]
//	matcher = "Bash"
//	hooks = [{ type = "command", command = "~/bin/check.sh", timeout = 10 }]
type Hook struct {
	Event   string // PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, Notification
	Matcher string
	Command string
	Timeout time.Duration // 0: the default
	Source  string        // the file it came from
}

// hookEvents are the events dsh runs hooks for (Claude Code has more).
var hookEvents = []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "Notification"}

// maxHookTimeout keeps a hook from holding a turn for longer than a command may.
const maxHookTimeout = 10 * time.Minute

type rawHookGroup struct {
	Matcher string    `toml:"matcher" json:"matcher"`
	Hooks   []rawHook `toml:"hooks" json:"hooks"`
}

type rawHook struct {
	Type    string `toml:"type" json:"type"`
	Command string `toml:"command" json:"command"`
	Timeout any    `toml:"timeout" json:"timeout"` // seconds, an integer or not
}

// hookTable validates a file's hooks. strict (dsh's own files) refuses what
// dsh does not run; otherwise (Claude Code's files, which hold more than dsh
// knows) it is skipped with a note.
func hookTable(groups map[string][]rawHookGroup, source string, strict bool) (hs []Hook, notes []string, err error) {
	for _, event := range sortedKeys(groups) {
		if !slices.Contains(hookEvents, event) {
			if strict {
				return nil, nil, fmt.Errorf("hooks.%s: dsh runs hooks for %s only", event, strings.Join(hookEvents, ", "))
			}
			notes = append(notes, fmt.Sprintf("%s: %s hooks ignored: dsh does not run them", source, event))
			continue
		}
		for i, g := range groups[event] {
			if g.Matcher != "" && g.Matcher != "*" {
				if _, err := regexp.Compile(g.Matcher); err != nil {
					return nil, nil, fmt.Errorf("hooks.%s[%d].matcher: %w", event, i, err)
				}
			}
			for j, h := range g.Hooks {
				at := fmt.Sprintf("hooks.%s[%d].hooks[%d]", event, i, j)
				if h.Type != "" && h.Type != "command" {
					if strict {
						return nil, nil, fmt.Errorf("%s.type: want \"command\", got %q", at, h.Type)
					}
					notes = append(notes, fmt.Sprintf("%s: %s ignored: dsh runs command hooks only, not %q", source, at, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					return nil, nil, fmt.Errorf("%s.command: want the command to run", at)
				}
				d, err := hookTimeout(h.Timeout)
				if err != nil {
					return nil, nil, fmt.Errorf("%s.timeout: %w", at, err)
				}
				hs = append(hs, Hook{Event: event, Matcher: g.Matcher, Command: h.Command, Timeout: d, Source: source})
			}
		}
	}
	return hs, notes, nil
}

func hookTimeout(v any) (time.Duration, error) {
	var s float64
	switch t := v.(type) {
	case nil:
		return 0, nil
	case int64:
		s = float64(t)
	case float64:
		s = t
	default:
		return 0, errors.New("want a number of seconds")
	}
	d := time.Duration(s * float64(time.Second))
	if d <= 0 || d > maxHookTimeout {
		return 0, fmt.Errorf("want a number of seconds above 0 and at most %d", int(maxHookTimeout.Seconds()))
	}
	return d, nil
}

// claudeSettings is what dsh reads of a Claude Code settings.json: its hooks.
type claudeSettings struct {
	Hooks map[string][]rawHookGroup `json:"hooks"`
}

// claudeHooks reads the hooks of a Claude Code settings file: the user's own
// (root "") or a project's, inside root. A missing file has none.
func claudeHooks(path, root string) ([]Hook, []string, error) {
	var b []byte
	var more bool
	var err error
	if root != "" {
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, rerr)
		}
		b, more, err = workspace.ReadProjectFile(root, rel, maxFileSize)
	} else {
		b, more, err = readCapped(path, maxFileSize)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	case more:
		return nil, nil, fmt.Errorf("%s: larger than %d bytes; not a settings file", path, maxFileSize)
	}
	var s claudeSettings
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	hs, notes, err := hookTable(s.Hooks, path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return hs, notes, nil
}

// claudeProjectFiles are the project's Claude Code settings dsh reads hooks from.
var claudeProjectFiles = []string{"settings.json", "settings.local.json"}

// trustSum is the project file's hash sum (sum, "" without one), made to
// cover what trusting the project lets run: its Claude Code settings when it
// has any, and the scripts in the workspace that the hooks of either name
// (hooks are the config.toml's). Trusting the project is trusting all of
// them, and a change of any asks again. Without any, sum is unchanged.
func trustSum(sum, root string, hooks []Hook) string {
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
		found = true
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
		return sum
	}
	fmt.Fprintf(h, "config.toml %s\n", sum)
	return fmt.Sprintf("%x", h.Sum(nil))
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

// claudeUserSettings is the user's Claude Code settings file ("" without HOME).
func claudeUserSettings(getenv func(string) string) string {
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".claude", "settings.json")
	}
	return ""
}

// loadHooks adds the hooks of Claude Code's settings files to c's: the user's
// always, the project's (.claude/settings.json and settings.local.json) only
// when the project is trusted: a repository's hooks are commands it would run.
func (c *Config) loadHooks(projectRoot string, trusted bool) error {
	add := func(path, root string) error {
		hs, notes, err := claudeHooks(path, root)
		if err != nil && root != "" {
			// A repository's file must not stop dsh from starting in it.
			c.Notices = append(c.Notices, fmt.Sprintf("%v; its hooks are ignored", err))
			return nil
		}
		if err != nil {
			return err
		}
		c.Notices = append(c.Notices, notes...)
		if len(hs) > 0 && root != "" && !trusted {
			c.Notices = append(c.Notices, fmt.Sprintf("%s: hooks ignored: a project may not run commands unless you trust it "+
				"(the chat asks; or list it in trusted_projects in the user's file)", path))
			return nil
		}
		c.addHooks(hs)
		return nil
	}
	if path := claudeUserSettings(c.getenv); path != "" {
		if err := add(path, ""); err != nil {
			return err
		}
	}
	if projectRoot == "" {
		return nil
	}
	for _, name := range claudeProjectFiles {
		if err := add(filepath.Join(projectRoot, ".claude", name), projectRoot); err != nil {
			return err
		}
	}
	return nil
}

// addHooks adds hs, leaving out those already configured (the same event,
// matcher and command), as Claude Code runs a duplicate once.
func (c *Config) addHooks(hs []Hook) {
	for _, h := range hs {
		if !slices.ContainsFunc(c.Hooks, func(o Hook) bool {
			return o.Event == h.Event && o.Matcher == h.Matcher && o.Command == h.Command
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
		parts = append(parts, at+": "+h.Command)
	}
	return strings.Join(parts, "; ")
}
