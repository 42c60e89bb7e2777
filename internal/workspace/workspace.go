// Package workspace confines a session's file paths to its workspace root and
// holds the session's current directory.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrOutside is wrapped by every refusal to touch a path outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// Workspace is a root directory and a current directory inside it.
type Workspace struct {
	root         string // absolute, symlinks resolved
	allowOutside bool

	mu  sync.Mutex
	cwd string
}

// New returns a workspace rooted at root (made absolute, symlinks resolved). With
// allowOutside, paths outside the root are permitted (the user's --allow-outside).
func New(root string, allowOutside bool) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", abs)
	}
	return &Workspace{root: real, allowOutside: allowOutside, cwd: real}, nil
}

// Root returns the absolute workspace root.
func (w *Workspace) Root() string { return w.root }

// Cwd returns the session's current directory (absolute).
func (w *Workspace) Cwd() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cwd
}

// SetCwd moves the session's current directory; it must be an existing directory
// inside the workspace.
func (w *Workspace) SetCwd(dir string) error {
	abs, err := w.Resolve(dir)
	if err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("cd %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("cd %s: not a directory", dir)
	}
	w.mu.Lock()
	w.cwd = abs
	w.mu.Unlock()
	return nil
}

// Resolve turns p (relative to the current directory, or absolute) into an
// absolute path, refusing paths that are — or whose existing part resolves through
// symlinks to — outside the workspace root.
func (w *Workspace) Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(w.Cwd(), p)
	}
	abs = filepath.Clean(abs)
	if w.allowOutside {
		return abs, nil
	}
	if !w.Contains(abs) {
		return "", fmt.Errorf("%s is %w %s (start dsh with --allow-outside to permit it)", p, ErrOutside, w.root)
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	if !w.Contains(real) {
		return "", fmt.Errorf("%s resolves through a symlink to %s, %w %s (start dsh with --allow-outside to permit it)", p, real, ErrOutside, w.root)
	}
	return abs, nil
}

// Contains reports whether the absolute, clean path abs is the root or below it.
func (w *Workspace) Contains(abs string) bool {
	return abs == w.root || strings.HasPrefix(abs, w.root+string(filepath.Separator))
}

// Rel returns abs relative to the root for display, or abs itself if outside.
func (w *Workspace) Rel(abs string) string {
	if !w.Contains(abs) {
		return abs
	}
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return rel
}

// evalExisting resolves symlinks in the longest existing prefix of abs and joins
// the rest, so that a file about to be created under a symlinked directory is
// judged by where it would really land.
func evalExisting(abs string) (string, error) {
	return evalExistingDepth(abs, 0)
}

func evalExistingDepth(abs string, depth int) (string, error) {
	if depth > 40 {
		return "", errors.New("too many levels of symbolic links")
	}
	rest := ""
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// A dangling symlink still decides where a write through it lands.
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return evalExistingDepth(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
