package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/workspace"
)

// Folders of Dir that hold clones, not plugins.
const (
	reposDir   = "repos"
	marketsDir = "marketplaces"
	stateFile  = "plugins.json"
)

// State is what dsh plugin records, in Dir's plugins.json.
type State struct {
	Plugins      []Installed   `json:"plugins,omitempty"`
	Marketplaces []Marketplace `json:"marketplaces,omitempty"`
	// Enabled is dsh plugin enable's and disable's word on a plugin, by ID,
	// over Claude Code's settings for one of its plugins.
	Enabled map[string]bool `json:"enabled,omitempty"`
}

// Installed is a plugin dsh plugin add recorded.
type Installed struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Source string `json:"source"` // the folder, URL or name@marketplace it came from
}

// Marketplace is a marketplace dsh plugin marketplace add recorded.
type Marketplace struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Source string `json:"source"`
}

func (st State) enabled(id string, def bool) bool {
	if v, ok := st.Enabled[id]; ok {
		return v
	}
	return def
}

func (st State) recorded(path string) bool {
	for _, p := range st.Plugins {
		if p.Path == path {
			return true
		}
	}
	return false
}

// LoadState reads dsh's plugin state; none yet is the empty state.
func LoadState(getenv func(string) string) (State, error) {
	dir := Dir(getenv)
	if dir == "" {
		return State{}, nil
	}
	b, err := readOwn(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	return st, nil
}

func saveState(getenv func(string) string, st State) error {
	dir, err := ownDir(getenv)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return workspace.WriteOwnFile(filepath.Join(dir, stateFile), append(b, '\n'), 0o600)
}

func ownDir(getenv func(string) string) (string, error) {
	dir := Dir(getenv)
	if dir == "" {
		return "", errors.New("no folder for dsh's plugins: set HOME or XDG_CONFIG_HOME")
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// githubShort is Claude Code's owner/repo shorthand for a GitHub repository;
// remoteURL a URL git fetches from, or an scp-like user@host:path.
var (
	githubShort = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`) })
	remoteURL   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^((https?|git|ssh|file)://|[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:)`)
	})
)

// gitURL is src as a git URL, if it is one: a URL, scp-like host:path, a
// path ending .git that is not a plugin folder, or GitHub's owner/repo.
func gitURL(src string) (string, bool) {
	switch {
	case remoteURL().MatchString(src):
		return src, true
	case strings.HasSuffix(src, ".git"):
		if _, err := os.Stat(src); err == nil {
			abs, err := filepath.Abs(src)
			return abs, err == nil
		}
		return src, true
	case githubShort().MatchString(src):
		if _, err := os.Stat(src); err != nil {
			return "https://github.com/" + src + ".git", true
		}
	}
	return "", false
}

// isFolder says src is a folder holding file (a bare repository is a git
// URL, not a folder).
func isFolder(src, file string) bool {
	fi, err := os.Stat(src)
	if err != nil || !fi.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(src, filepath.FromSlash(file)))
	return err == nil || !strings.HasSuffix(src, ".git")
}

// cloneWait bounds a clone.
const cloneWait = 5 * time.Minute

// clone clones url into a new folder below parent and returns it.
func clone(ctx context.Context, url, parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	dest, err := os.MkdirTemp(parent, ".clone-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, cloneWait)
	defer cancel()
	// Nothing of the remote runs: no hooks come with a clone, and ext:: URLs
	// (a command) are refused.
	cmd := exec.CommandContext(ctx, "git", "-c", "protocol.ext.allow=never", "clone", "--quiet", "--depth", "1", "--", url, dest)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dest)
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 && strings.HasPrefix(msg[i+1:], "fatal:") {
			msg = msg[i+1:]
		}
		return "", fmt.Errorf("git clone %s: %w: %s", url, err, msg)
	}
	return dest, nil
}

// place renames a fresh clone to parent/name, replacing nothing.
func place(tmp, parent, name string) (string, error) {
	dest := filepath.Join(parent, name)
	if _, err := os.Lstat(dest); err == nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("%s exists already: remove it first", dest)
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	return dest, nil
}

// Add adds the plugin at src — a folder (used where it is), a git URL
// (cloned into Dir) or name@marketplace (one of a marketplace added before)
// — to dsh's plugins, enabled.
func Add(ctx context.Context, getenv func(string) string, src string) (Plugin, error) {
	st, err := LoadState(getenv)
	if err != nil {
		return Plugin{}, err
	}
	dir, err := ownDir(getenv)
	if err != nil {
		return Plugin{}, err
	}
	var p Plugin
	id := ""
	if name, market, ok := strings.Cut(src, "@"); ok && !strings.ContainsAny(src, "/:") {
		if p, err = fromMarketplace(ctx, st, dir, name, market); err != nil {
			return Plugin{}, err
		}
		id = name + "@" + market
	} else if isFolder(src, ManifestPath) {
		if p, err = Load(src); err != nil {
			return Plugin{}, err
		}
	} else if url, ok := gitURL(src); ok {
		if p, err = cloned(ctx, url, filepath.Join(dir, reposDir)); err != nil {
			return Plugin{}, err
		}
	} else {
		return Plugin{}, fmt.Errorf("%s is neither a plugin folder, a git URL nor NAME@MARKETPLACE", src)
	}
	if id == "" {
		id = p.Name
	}
	for _, in := range st.Plugins {
		if in.ID == id || strings.SplitN(in.ID, "@", 2)[0] == p.Name {
			return Plugin{}, fmt.Errorf("a plugin %s is added already (%s): remove it first", in.ID, in.Path)
		}
	}
	p.ID, p.From, p.Enabled = id, "dsh", true
	st.Plugins = append(st.Plugins, Installed{ID: id, Path: p.Root, Source: src})
	delete(st.Enabled, id)
	return p, saveState(getenv, st)
}

// cloned clones a plugin's repository into parent/NAME.
func cloned(ctx context.Context, url, parent string) (Plugin, error) {
	tmp, err := clone(ctx, url, parent)
	if err != nil {
		return Plugin{}, err
	}
	p, err := Load(tmp)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return Plugin{}, fmt.Errorf("%s: %w", url, err)
	}
	path, err := place(tmp, parent, p.Name)
	if err != nil {
		return Plugin{}, err
	}
	return Load(path)
}

// Remove removes dsh's plugin id (or name), and its clone if dsh made one.
func Remove(getenv func(string) string, id string) (Installed, error) {
	st, err := LoadState(getenv)
	if err != nil {
		return Installed{}, err
	}
	for i, in := range st.Plugins {
		if in.ID != id && strings.SplitN(in.ID, "@", 2)[0] != id {
			continue
		}
		st.Plugins = append(st.Plugins[:i], st.Plugins[i+1:]...)
		delete(st.Enabled, in.ID)
		if err := saveState(getenv, st); err != nil {
			return Installed{}, err
		}
		if filepath.Dir(in.Path) == filepath.Join(Dir(getenv), reposDir) {
			return in, os.RemoveAll(in.Path)
		}
		return in, nil
	}
	return Installed{}, fmt.Errorf("dsh has no plugin %s added (dsh plugin list shows them; Claude Code's are removed with claude plugin uninstall)", id)
}

// SetEnabled enables or disables the plugin id (or name) found for the
// project root, dsh's or Claude Code's: dsh's word on it, which Claude
// Code's settings do not change.
func SetEnabled(getenv func(string) string, root, id string, on bool) (Plugin, error) {
	all, _ := Find(root, getenv)
	for _, p := range all {
		if p.ID != id && p.Name != id {
			continue
		}
		st, err := LoadState(getenv)
		if err != nil {
			return Plugin{}, err
		}
		if st.Enabled == nil {
			st.Enabled = map[string]bool{}
		}
		st.Enabled[p.ID] = on
		p.Enabled = on
		return p, saveState(getenv, st)
	}
	return Plugin{}, fmt.Errorf("there is no plugin %s (dsh plugin list shows them)", id)
}
