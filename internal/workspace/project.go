package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// A repository's own files — its instructions, commands and configuration — are
// input from whoever wrote the repository. ReadProjectFile and WalkProject read
// them inside the repository only: a symlink that leads out of it (to
// ~/.ssh/id_rsa, to /dev/zero) is refused, not followed, and what is read is a
// regular file, at most a cap of it, so no file can hang dsh or grow its memory.

// ErrNotRegular is wrapped by the refusal of a device, FIFO, socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// ReadProjectFile reads at most limit bytes of the regular file rel (slash or
// OS separated, relative to root) inside the directory root. more says the file
// is longer than limit. A missing file is an error wrapping fs.ErrNotExist; a
// symlink that leads out of root, one wrapping ErrOutside.
func ReadProjectFile(root, rel string, limit int) (data []byte, more bool, err error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = r.Close() }()
	return readIn(r, root, rel, limit)
}

func readIn(r *os.Root, root, rel string, limit int) ([]byte, bool, error) {
	rel = filepath.Clean(filepath.FromSlash(rel))
	// Non-blocking: opening a FIFO would wait for a writer; no controlling tty.
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false, refusal(root, rel, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is %w (%s)", rel, ErrNotRegular, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", rel, err)
	}
	if len(b) > limit {
		return b[:limit], true, nil
	}
	return b, false, nil
}

// refusal explains why rel could not be opened in root: os.Root says only that
// a path escapes, so name the symlink and where it leads. An absolute link is
// refused even when it leads back inside: the repository's author cannot know
// where it is cloned, so it points at the cloner's files.
func refusal(root, rel string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	rr, _ := filepath.EvalSymlinks(root)
	cur := root
	for _, c := range split(filepath.ToSlash(rel)) {
		cur = filepath.Join(cur, c)
		fi, lerr := os.Lstat(cur)
		if lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(cur)
		real, rerr := filepath.EvalSymlinks(cur)
		if rerr != nil {
			real = target
		}
		if filepath.IsAbs(target) || !isUnder(real, rr) {
			shown, _ := filepath.Rel(root, cur)
			return fmt.Errorf("%s is a symlink to %s, %w %s", shown, target, ErrOutside, root)
		}
	}
	return fmt.Errorf("%s: %w", rel, err)
}

func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && !strings.HasPrefix(rel, "../")
}

// ProjectEntry is one regular file WalkProject found.
type ProjectEntry struct {
	Rel  string // relative to the directory walked, slash-separated
	Data []byte
	More bool // longer than the limit: Data holds the first limit bytes
}

// WalkProject reads every regular file below dir (relative to root) whose name
// keep accepts, each capped at limit bytes, in lexical order. Directories and
// files reached through a symlink out of root are not read; each refusal is in
// the joined error, the other files are still returned. A missing dir is no
// files and no error.
func WalkProject(root, dir string, limit int, keep func(name string) bool) ([]ProjectEntry, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer func() { _ = r.Close() }()
	dir = filepath.ToSlash(filepath.Clean(dir))
	var out []ProjectEntry
	var errs []error
	werr := fs.WalkDir(r.FS(), dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return fs.SkipAll
			}
			errs = append(errs, refusal(root, path, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !keep(d.Name()) {
			return nil
		}
		data, more, err := readIn(r, root, path, limit)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		rel := path[len(dir):]
		if len(rel) > 0 && rel[0] == '/' {
			rel = rel[1:]
		}
		if dir == "." {
			rel = path
		}
		out = append(out, ProjectEntry{Rel: rel, Data: data, More: more})
		return nil
	})
	if werr != nil {
		errs = append(errs, refusal(root, dir, werr))
	}
	return out, errors.Join(errs...)
}

// ReadOwnFile reads at most limit bytes of the regular file at path, a file of
// the user's own (their configuration directory): opened without blocking on a
// FIFO or taking a terminal, a device refused. more says it is longer than limit.
func ReadOwnFile(path string, limit int) (data []byte, more bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false, err
	}
	return readRegular(f, limit)
}

// ReadCapped reads at most limit bytes of the located file, which must be a
// regular one (File.Open never blocks on a FIFO). more says it is longer.
func (f File) ReadCapped(limit int) (data []byte, more bool, err error) {
	fh, err := f.Open()
	if err != nil {
		return nil, false, err
	}
	return readRegular(fh, limit)
}

// readRegular reads f, if it is a regular file, up to limit bytes, and
// closes it.
func readRegular(f *os.File, limit int) ([]byte, bool, error) {
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, ErrNotRegular
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	return b, len(b) > limit, err
}
