package search

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// maxIgnoreFile bounds the bytes read of one ignore file.
const maxIgnoreFile = 1 << 20

// walkOptions say which entries a walk visits. Like ripgrep by default: hidden
// entries (a name starting with ".") are skipped, .ignore files apply
// everywhere, .gitignore files and .git/info/exclude inside a git repository;
// symbolic links are never followed, so a walk cannot leave the tree it starts in.
type walkOptions struct {
	hidden bool // visit hidden entries too
	// keepDir, if set, decides whether to descend into a directory that the
	// ignore rules keep (rel is relative to the search root).
	keepDir func(rel, name string) bool
}

// dirNode is a directory being walked, held open so that its entries are opened
// relative to it (openat with O_NOFOLLOW): a directory swapped for a symlink
// while the walk runs cannot lead it out. It is closed when its last user is done.
type dirNode struct {
	f    *os.File
	rel  string // relative to the search root, "" for the root
	refs atomic.Int32
}

func (d *dirNode) fd() int { return int(d.f.Fd()) }

func (d *dirNode) hold() { d.refs.Add(1) }

func (d *dirNode) release() {
	if d.refs.Add(-1) == 0 {
		_ = d.f.Close() // a read-only directory: nothing to lose
	}
}

// join is the path of the entry name inside d, relative to the search root.
func (d *dirNode) join(name string) string {
	if d.rel == "" {
		return name
	}
	return d.rel + "/" + name
}

// walker walks one directory tree in a fixed order (entries sorted by name,
// depth first), deciding what to visit by the ignore rules.
type walker struct {
	opts   walkOptions
	frames []ignoreFrame
	repo   bool // the current directory is inside a git repository
}

// newWalker prepares a walk of root: the ignore files of its ancestors inside the
// workspace (from top, the workspace root, down to root's parent) apply to it too.
func newWalker(top, root string, o walkOptions) *walker {
	w := &walker{opts: o}
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			w.repo = true
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	var ancestors []string
	if root != top && strings.HasPrefix(root, top+string(filepath.Separator)) {
		for d := filepath.Dir(root); ; d = filepath.Dir(d) {
			ancestors = append(ancestors, d)
			if d == top || d == filepath.Dir(d) {
				break
			}
		}
	}
	slices.Reverse(ancestors)
	for _, a := range ancestors {
		rel, err := filepath.Rel(a, root)
		if err != nil {
			continue
		}
		f := ignoreFrame{lead: filepath.ToSlash(rel) + "/"}
		if w.repo {
			if s := readIgnore(unix.AT_FDCWD, filepath.Join(a, ".git", "info", "exclude")); s != nil {
				f.sets = append(f.sets, s)
			}
		}
		for _, name := range w.ignoreNames() {
			if s := readIgnore(unix.AT_FDCWD, filepath.Join(a, name)); s != nil {
				f.sets = append(f.sets, s)
			}
		}
		if len(f.sets) > 0 {
			w.frames = append(w.frames, f)
		}
	}
	return w
}

// ignoreNames are the ignore files read in a directory, lowest precedence first.
func (w *walker) ignoreNames() []string {
	if w.repo {
		return []string{".gitignore", ".ignore"}
	}
	return []string{".ignore"}
}

// readIgnore reads the ignore file at path (relative to dirfd), or nil.
func readIgnore(dirfd int, path string) *ignoreSet {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), path)
	defer func() { _ = f.Close() }()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parseIgnore(data)
}

// visitFunc receives each directory with its files (sorted by name) before the
// directory's subdirectories are walked. It must hold d for as long as it uses
// it after returning.
type visitFunc func(d *dirNode, files []string) error

// errStop ends a walk early without an error.
var errStop = errors.New("stop")

// walk visits root (an absolute directory) and everything below it that the
// options keep.
func (w *walker) walk(ctx context.Context, root string, visit visitFunc) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: root, Err: err}
	}
	d := &dirNode{f: os.NewFile(uintptr(fd), root)}
	d.refs.Store(1)
	err = w.dir(ctx, root, d, visit)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

func (w *walker) dir(ctx context.Context, abs string, d *dirNode, visit visitFunc) error {
	defer d.release()
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := d.f.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		return nil // unreadable: skipped, like ripgrep does after a warning
	}
	slices.SortFunc(entries, func(a, b iofs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })

	// This directory's ignore files apply to its entries.
	repo := w.repo
	pushed := false
	for _, e := range entries {
		if e.Name() == ".git" {
			w.repo = true
		}
	}
	depth := 0
	if d.rel != "" {
		depth = len(d.rel) + 1
	}
	frame := ignoreFrame{depth: depth}
	for _, name := range w.ignoreNames() {
		if _, ok := slices.BinarySearchFunc(entries, name, func(e iofs.DirEntry, n string) int { return strings.Compare(e.Name(), n) }); !ok {
			continue
		}
		if s := readIgnore(d.fd(), name); s != nil {
			frame.sets = append(frame.sets, s)
		}
	}
	if w.repo && !repo {
		if s := readIgnore(d.fd(), ".git/info/exclude"); s != nil {
			frame.sets = append([]*ignoreSet{s}, frame.sets...)
		}
	}
	if len(frame.sets) > 0 {
		w.frames = append(w.frames, frame)
		pushed = true
	}
	defer func() {
		if pushed {
			w.frames = w.frames[:len(w.frames)-1]
		}
		w.repo = repo
	}()

	var files, dirs []string
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || (!w.opts.hidden && name[0] == '.') {
			continue
		}
		t := e.Type()
		isDir := t.IsDir()
		if !isDir && !t.IsRegular() {
			continue // symlinks, devices, sockets, FIFOs
		}
		rel := d.join(name)
		if len(w.frames) > 0 && ignored(w.frames, rel, name, isDir) {
			continue
		}
		if isDir {
			if w.opts.keepDir == nil || w.opts.keepDir(rel, name) {
				dirs = append(dirs, name)
			}
		} else {
			files = append(files, name)
		}
	}
	if err := visit(d, files); err != nil {
		return err
	}
	for _, name := range dirs {
		fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue // gone, swapped for a symlink, or unreadable
		}
		sub := filepath.Join(abs, name)
		c := &dirNode{f: os.NewFile(uintptr(fd), sub), rel: d.join(name)}
		c.refs.Store(1)
		if err := w.dir(ctx, sub, c, visit); err != nil {
			return err
		}
	}
	return nil
}
