package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// RuleLists are permission rules by effect, as a config.toml's [permissions]
// table and a Claude Code settings file's "permissions" hold them.
type RuleLists struct {
	Allow []string `toml:"allow" json:"allow"`
	Ask   []string `toml:"ask" json:"ask"`
	Deny  []string `toml:"deny" json:"deny"`
	// AdditionalDirs is Claude Code's additionalDirectories.
	AdditionalDirs []string `toml:"-" json:"additionalDirectories"`
	// DefaultMode is Claude Code's defaultMode (see claudeModes).
	DefaultMode string `toml:"-" json:"defaultMode"`
	// DisableBypass is Claude Code's disableBypassPermissionsMode: "disable"
	// turns the bypass mode off.
	DisableBypass string `toml:"-" json:"disableBypassPermissionsMode"`
}

// PermissionRule is one rule as a file gives it; package rules reads it.
type PermissionRule struct {
	Effect string // allow, ask or deny
	Rule   string
	Source string // the file
	// Project says the rule is a project's: a path rule's "/x" is then the
	// project's, as for the user's.
	Project bool
}

// addRules adds a file's rules. An untrusted project's may only narrow what
// runs unasked: its allow rules are ignored, and said so.
func (c *Config) addRules(l *RuleLists, path string, project, trusted bool) {
	if l == nil {
		return
	}
	for _, e := range []struct {
		effect string
		rules  []string
	}{{"deny", l.Deny}, {"ask", l.Ask}, {"allow", l.Allow}} {
		if e.effect == "allow" && project && !trusted && len(e.rules) > 0 {
			c.Notices = append(c.Notices, fmt.Sprintf("%s: permissions.allow ignored: a project may only narrow what runs unasked unless you trust it "+
				"(the chat asks; or list it in trusted_projects in the user's file)", path))
			continue
		}
		for _, r := range e.rules {
			pr := PermissionRule{Effect: e.effect, Rule: strings.TrimSpace(r), Source: path, Project: project}
			if pr.Rule != "" && !slices.Contains(c.Permissions, pr) {
				c.Permissions = append(c.Permissions, pr)
			}
		}
	}
	if len(l.AdditionalDirs) > 0 {
		if project && !trusted {
			c.Notices = append(c.Notices, fmt.Sprintf("%s: permissions.additionalDirectories ignored: a project file may not widen where the agent works", path))
			return
		}
		c.AdditionalDirs = slices.Compact(slices.Sorted(slices.Values(append(c.AdditionalDirs, l.AdditionalDirs...))))
		c.sources["additional_directories"] = joinSource(c.sources["additional_directories"], path)
	}
}

// RulesPath is dsh's own file of the user's permission rules, beside
// config.toml, in Claude Code's settings shape; /permissions edits it.
func RulesPath(getenv func(string) string) string {
	if p := UserPath(getenv); p != "" {
		return filepath.Join(filepath.Dir(p), "permissions.json")
	}
	return ""
}

// loadRules adds the user's own rules, dsh's permissions.json (Claude Code's
// settings are read with their hooks, by loadClaude).
func (c *Config) loadRules() error {
	path := RulesPath(c.getenv)
	if path == "" {
		return nil
	}
	b, err := readClaude(path, "")
	if err != nil || b == nil {
		return err
	}
	var s struct {
		Permissions *RuleLists `json:"permissions"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("reading your permission rules: %s: %w", path, err)
	}
	c.addRules(s.Permissions, path, false, true)
	return nil
}

// EditRules adds (or, remove set, removes) rule with effect in the user's
// permissions.json, keeping whatever else the file holds.
func EditRules(getenv func(string) string, effect, rule string, remove bool) error {
	path := RulesPath(getenv)
	if path == "" {
		return errors.New("no place for your rules: set HOME or XDG_CONFIG_HOME")
	}
	doc := map[string]json.RawMessage{}
	b, _, err := readCapped(path, maxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := doc["permissions"]; ok {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return fmt.Errorf("%s: permissions: %w", path, err)
		}
	}
	var list []string
	if raw, ok := perms[effect]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("%s: permissions.%s: %w", path, effect, err)
		}
	}
	had := slices.Contains(list, rule)
	switch {
	case remove && !had:
		return fmt.Errorf("%s is not one of your %s rules (%s)", rule, effect, path)
	case remove:
		list = slices.DeleteFunc(list, func(r string) bool { return r == rule })
	case had:
		return nil
	default:
		list = append(list, rule)
	}
	if perms[effect], err = json.Marshal(list); err != nil {
		return err
	}
	if doc["permissions"], err = json.Marshal(perms); err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return workspace.WriteOwnFile(path, append(out, '\n'), 0o600)
}
