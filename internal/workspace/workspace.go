// Package workspace confines a session's file paths to its workspace root and
// holds the session's current directory.
//
// Every file operation of the file tools goes through a File located here and
// is carried out by an os.Root opened on the workspace root, so the kernel
// resolves each path relative to that directory and no operation can leave it,
// whatever a concurrent process does to the tree between two calls: a path is
// never checked in one form and then used in another.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ErrOutside is wrapped by every refusal to touch a path outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// maxHops bounds the symbolic links one path may go through, as the kernel does.
const maxHops = 40

// Workspace is a root directory and a current directory inside it.
type Workspace struct {
	root         string // absolute, symlinks resolved
	allowOutside bool
	// base carries out every operation: the root itself, or "/" when paths
	// outside it are allowed. baseDir is its absolute path.
	base    *os.Root
	baseDir string
	// swept holds the directories (relative to the base) already cleared of
	// stale temporary files.
	swept sync.Map
	// journalPath notes the directories written in (UseJournal); "": none.
	journalPath string

	mu  sync.Mutex
	cwd string
	// extra are the further roots the session may work in (an editor's
	// additional directories), each confined like the root.
	extra []*Workspace
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
	baseDir := real
	if allowOutside {
		baseDir = "/"
	}
	base, err := os.OpenRoot(baseDir)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	return &Workspace{root: real, allowOutside: allowOutside, base: base, baseDir: baseDir, cwd: real}, nil
}

// Close releases the roots' directory handles. A workspace nobody closes is
// released when it is garbage collected.
func (w *Workspace) Close() error {
	w.mu.Lock()
	extra := w.extra
	w.mu.Unlock()
	err := w.base.Close()
	for _, x := range extra {
		err = errors.Join(err, x.Close())
	}
	return err
}

// AddRoot widens the workspace to dir (absolute, an existing directory): its
// files are located as the root's are, confined to it.
func (w *Workspace) AddRoot(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s: an additional directory must be an absolute path", dir)
	}
	x, err := New(dir, false)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range append([]*Workspace{w}, w.extra...) {
		if r.root == x.root {
			_ = x.Close()
			return nil
		}
	}
	w.extra = append(w.extra, x)
	return nil
}

// Roots are the root and the additional roots, absolute, symlinks resolved.
func (w *Workspace) Roots() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := []string{w.root}
	for _, x := range w.extra {
		out = append(out, x.root)
	}
	return out
}

// extraFor is the additional root abs lies in, if any.
func (w *Workspace) extraFor(abs string) *Workspace {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.extra {
		if x.Contains(abs) {
			return x
		}
	}
	return nil
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
	f, err := w.Locate(dir)
	if err != nil {
		return err
	}
	st, err := f.Lstat()
	if err != nil {
		return fmt.Errorf("cd %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("cd %s: not a directory", dir)
	}
	w.mu.Lock()
	w.cwd = f.abs
	w.mu.Unlock()
	return nil
}

// Resolve turns p (relative to the current directory, or absolute) into an
// absolute path as spelled, refusing paths that are — or that lead through
// symlinks — outside the workspace root. It is for callers that need a path
// string (a command's directory); file operations use Locate.
func (w *Workspace) Resolve(p string) (string, error) {
	f, err := w.Locate(p)
	if err != nil {
		return "", err
	}
	return f.abs, nil
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

// File is a path of the workspace located where the kernel would find it: every
// symbolic link on the way (the last one included, dangling or not) followed,
// and none leading out of the workspace. Its operations are carried out by the
// workspace's os.Root, so a tree changed since Locate (a directory swapped for a
// link) can make one fail or land elsewhere inside, never outside.
type File struct {
	w   *Workspace
	abs string // as asked: absolute and clean, symlinks kept
	rel string // relative to the base, no symlinks when located
}

// Locate resolves p (relative to the current directory, or absolute). The file
// need not exist: a missing file is located where creating it would put it.
func (w *Workspace) Locate(p string) (File, error) {
	if p == "" {
		return File{}, errors.New("empty path")
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(w.Cwd(), p)
	}
	abs = filepath.Clean(abs)
	rel, ok := w.relOf(abs)
	if x := w.extraFor(abs); x != nil && !w.Contains(abs) {
		return x.Locate(abs)
	}
	if !ok {
		return File{}, fmt.Errorf("%s is %w %s (start dsh with --allow-outside to permit it)", p, ErrOutside, w.root)
	}
	real, err := w.follow(rel)
	if err != nil {
		var esc *escapeError
		if errors.As(err, &esc) {
			return File{}, fmt.Errorf("%s resolves through a symlink to %s, %w %s (start dsh with --allow-outside to permit it)", p, esc.to, ErrOutside, w.root)
		}
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	return File{w: w, abs: abs, rel: real}, nil
}

// relOf turns an absolute clean path into one relative to the base.
func (w *Workspace) relOf(abs string) (string, bool) {
	switch {
	case abs == w.baseDir:
		return ".", true
	case w.baseDir == "/":
		return abs[1:], true
	case strings.HasPrefix(abs, w.baseDir+"/"):
		return abs[len(w.baseDir)+1:], true
	}
	return "", false
}

type escapeError struct{ to string }

func (e *escapeError) Error() string { return "a symlink leads to " + e.to }

// follow resolves the symlinks of rel one component at a time, as the kernel
// does (a link's target is read relative to the directory the link is in, after
// that directory's own links are resolved), and returns the path it leads to.
// Components that do not exist are kept as they are.
func (w *Workspace) follow(rel string) (string, error) {
	var done []string // resolved components, none of them a link
	todo := split(rel)
	via := "" // the last link's target, for the refusal
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(done) == 0 {
				if w.baseDir == "/" {
					continue // /.. is /
				}
				return "", &escapeError{via}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(done, c)...)
		fi, err := w.base.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			done = append(done, c)
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			done = append(done, c)
			continue
		}
		if hops++; hops > maxHops {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := w.base.Readlink(cur)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			t := filepath.Clean(target)
			trel, ok := w.relOf(t)
			if !ok {
				return "", &escapeError{t}
			}
			done = nil
			todo = append(split(trel), todo...)
			continue
		}
		via = filepath.Join(w.baseDir, filepath.Dir(cur), target)
		todo = append(split(target), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return filepath.Join(done...), nil
}

func split(p string) []string {
	var out []string
	for c := range strings.SplitSeq(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Abs returns the path as asked for: absolute and clean, its symlinks kept.
func (f File) Abs() string { return f.abs }

// Real returns where the path leads: absolute, its symlinks resolved. It names
// one file however it was reached.
func (f File) Real() string { return filepath.Join(f.w.baseDir, f.rel) }

// Lstat describes the located file itself.
func (f File) Lstat() (fs.FileInfo, error) { return f.w.base.Lstat(f.rel) }

// Open opens the file for reading. It never blocks on a FIFO and never makes a
// terminal the controlling one; the caller checks what it opened with Stat.
func (f File) Open() (*os.File, error) {
	return f.w.base.OpenFile(f.rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// Siblings lists up to n names of the directory the file is (or would be) in.
func (f File) Siblings(n int) ([]string, error) {
	d, err := f.w.base.Open(filepath.Dir(f.rel))
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	return d.Readdirnames(n)
}
