// Package claudehome says where Claude Code keeps a user's files: ~/.claude,
// or the folder CLAUDE_CONFIG_DIR names (as people with two accounts set
// it), and .claude.json beside them.
package claudehome

import (
	"path/filepath"
	"strings"
)

// Dir is the folder of the user's Claude Code settings, commands, agents,
// skills and plugins; "" when no variable names one.
func Dir(getenv func(string) string) string {
	if d := configDir(getenv); d != "" {
		return d
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".claude")
	}
	return ""
}

// JSON is the user's .claude.json (the MCP servers of the user and local
// scopes, among much else): in CLAUDE_CONFIG_DIR, else in the home folder;
// "" when no variable names one.
func JSON(getenv func(string) string) string {
	if d := configDir(getenv); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".claude.json")
	}
	return ""
}

// configDir is CLAUDE_CONFIG_DIR, ~/ read as the home folder; "" when it is
// not set or not absolute.
func configDir(getenv func(string) string) string {
	d := getenv("CLAUDE_CONFIG_DIR")
	if rest, ok := strings.CutPrefix(d, "~/"); ok && filepath.IsAbs(getenv("HOME")) {
		d = filepath.Join(getenv("HOME"), rest)
	}
	if !filepath.IsAbs(d) {
		return ""
	}
	return filepath.Clean(d)
}
