package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Dir is dsh's own plugin folder: $XDG_CONFIG_HOME/dsh/plugins, else
// ~/.config/dsh/plugins ("" when neither variable helps). It holds the state
// file, the clones of plugins and marketplaces added from git, and plugin
// folders put there by hand.
func Dir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "dsh", "plugins")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "dsh", "plugins")
	}
	return ""
}

// claudeDir is Claude Code's folder, ~/.claude or CLAUDE_CONFIG_DIR ("" without either).
func claudeDir(getenv func(string) string) string { return claudehome.Dir(getenv) }

// installEntry is one installation in Claude Code's installed_plugins.json.
type installEntry struct {
	Scope       string `json:"scope"`
	InstallPath string `json:"installPath"`
	ProjectPath string `json:"projectPath"`
	Version     string `json:"version"`
}

// claudeInstalled reads ~/.claude/plugins/installed_plugins.json: version 2
// lists installations per plugin ID, version 1 one each.
func claudeInstalled(getenv func(string) string) (map[string][]installEntry, error) {
	dir := claudeDir(getenv)
	if dir == "" {
		return nil, nil
	}
	b, err := readOwn(filepath.Join(dir, "plugins", "installed_plugins.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("installed_plugins.json of Claude Code: %w", err)
	}
	out := map[string][]installEntry{}
	for id, raw := range f.Plugins {
		var many []installEntry
		if json.Unmarshal(raw, &many) == nil {
			out[id] = many
			continue
		}
		var one installEntry
		if json.Unmarshal(raw, &one) == nil {
			out[id] = []installEntry{one}
		}
	}
	return out, nil
}

// enabledIn reads the enabledPlugins of a Claude Code settings file: the
// user's (root "") or a project's, inside root.
func enabledIn(path, root string) (map[string]bool, error) {
	var b []byte
	var err error
	if root != "" {
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil {
			return nil, rerr
		}
		var more bool
		b, more, err = workspace.ReadProjectFile(root, rel, maxFile)
		if err == nil && more {
			err = fmt.Errorf("%s: larger than %d bytes", path, maxFile)
		}
	} else {
		b, err = readOwn(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s struct {
		EnabledPlugins map[string]any `json:"enabledPlugins"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]bool{}
	for id, v := range s.EnabledPlugins {
		on, _ := v.(bool) // a list of versions (older files) counts as enabled
		if _, list := v.([]any); list {
			on = true
		}
		out[id] = on
	}
	return out, nil
}

// Find lists the plugins a session in the project root uses, enabled or not:
// dsh's own first (what dsh plugin add recorded, then folders put in Dir by
// hand), then Claude Code's installations that apply here (user-scoped, or
// scoped to this project), enabled as Claude Code's settings say (the
// project's over the user's) unless dsh plugin enable or disable said
// otherwise. The first plugin of a name wins. What cannot be read is told in
// the error; the rest are still returned.
func Find(root string, getenv func(string) string) ([]Plugin, error) {
	var out []Plugin
	var errs []error
	seen := map[string]bool{}
	add := func(p Plugin) {
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("plugin %s (%s): another plugin of that name comes first", p.ID, p.Root))
			return
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	st, err := LoadState(getenv)
	if err != nil {
		errs = append(errs, err)
	}
	for _, in := range st.Plugins {
		p, err := Load(in.Path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.ID, p.From, p.Enabled = in.ID, "dsh", st.enabled(in.ID, true)
		add(p)
	}
	if dir := Dir(getenv); dir != "" {
		entries, _ := os.ReadDir(dir) // a missing folder has none
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if !e.IsDir() || e.Name() == reposDir || e.Name() == marketsDir || st.recorded(path) {
				continue
			}
			if _, err := os.Stat(filepath.Join(path, filepath.FromSlash(ManifestPath))); err != nil {
				continue
			}
			p, err := Load(path)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.From, p.Enabled = "dsh", st.enabled(p.ID, true)
			add(p)
		}
	}
	claude, err := fromClaude(root, getenv, st)
	if err != nil {
		errs = append(errs, err)
	}
	for _, p := range claude {
		add(p)
	}
	return out, errors.Join(errs...)
}

// fromClaude are Claude Code's installed plugins that apply in root.
func fromClaude(root string, getenv func(string) string, st State) ([]Plugin, error) {
	installed, err := claudeInstalled(getenv)
	if err != nil || len(installed) == 0 {
		return nil, err
	}
	var errs []error
	user, err := enabledIn(filepath.Join(claudeDir(getenv), "settings.json"), "")
	if err != nil {
		errs = append(errs, err)
	}
	project := map[string]bool{}
	if root != "" {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			m, err := enabledIn(filepath.Join(root, ".claude", name), root)
			if err != nil {
				errs = append(errs, err)
			}
			for id, on := range m {
				project[id] = on
			}
		}
	}
	ids := make([]string, 0, len(installed))
	for id := range installed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Plugin
	for _, id := range ids {
		entry, scoped, ok := applying(installed[id], root)
		if !ok {
			continue
		}
		on, inProject := project[id]
		if !inProject {
			on = user[id]
		}
		p, err := Load(entry.InstallPath)
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin %s (installed by Claude Code): %w", id, err))
			continue
		}
		p.ID, p.From = id, "claude"
		// Enabled by the project's settings and not the user's, or installed
		// for this project: the project chose it, so it runs as the
		// project's own would.
		p.Project = scoped || (inProject && on && !user[id])
		p.Enabled = st.enabled(id, on)
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// applying is the installation that applies in root: one scoped to this
// project (scoped) before the user's.
func applying(es []installEntry, root string) (e installEntry, scoped, ok bool) {
	for _, x := range es {
		if (x.Scope == "project" || x.Scope == "local") && root != "" && samePath(x.ProjectPath, root) {
			return x, true, true
		}
	}
	for _, x := range es {
		if x.Scope == "" || x.Scope == "user" {
			return x, false, true
		}
	}
	return installEntry{}, false, false
}

func samePath(a, b string) bool {
	if a == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
