package fs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// atomicBuffer is the write buffer between a fill function and the temporary file:
// large enough that an edit with millions of small sites costs few syscalls.
const atomicBuffer = 1 << 20

// atomicWrite replaces the file at path with what fill writes, so that a reader
// sees the old content or the new, never a torn mix, and a crash leaves the old
// file: fill streams into a temporary file in the same directory, which is synced
// and renamed over the target. An existing file keeps its mode; a new one gets the
// usual 0666 less the umask, and its missing parent directories are created. A
// symlink is followed and its target replaced, so the link stays a link.
func atomicWrite(path string, fill func(io.Writer) error) error {
	target, err := atomicTarget(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	perm, keep := os.FileMode(0o666), false
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		perm = fi.Mode() & (iofs.ModePerm | iofs.ModeSetuid | iofs.ModeSetgid | iofs.ModeSticky)
		keep = true
	case errors.Is(err, iofs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	default:
		return err
	}
	f, err := atomicTemp(dir, filepath.Base(target), perm.Perm())
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := atomicFill(f, keep, perm, fill); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// Make the rename itself durable; a directory that cannot be synced (some
	// file systems refuse) still holds the new file.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func atomicFill(f *os.File, keep bool, perm os.FileMode, fill func(io.Writer) error) error {
	if keep {
		// The umask may have narrowed the mode the file was opened with, and
		// the open mode carries no setuid, setgid or sticky bits.
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(f, atomicBuffer)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// atomicTemp creates a new hidden file next to the target.
func atomicTemp(dir, base string, perm os.FileMode) (*os.File, error) {
	if len(base) > 200 { // stay under NAME_MAX with the suffix
		base = base[:200]
	}
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%016x.dsh-tmp", base, rand.Uint64()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

// atomicTarget follows path through symlinks to the file a write should replace.
// A dangling link leads to the file it would create.
func atomicTarget(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, iofs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&iofs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}
