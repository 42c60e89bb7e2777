package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WalkOwn reads every regular file below dir, a directory of the user's own
// (their commands, agents), whose name keep accepts, each capped at limit
// bytes, in lexical order: links are the user's to make, but each must lead
// to a regular file. A missing dir is no files and no error; a file that
// cannot be read is in the joined error, the others are still returned.
func WalkOwn(dir string, limit int, keep func(name string) bool) ([]ProjectEntry, error) {
	var out []ProjectEntry
	var errs []error
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !keep(d.Name()) {
			return nil
		}
		b, more, err := ReadOwnFile(path, limit)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, ProjectEntry{Rel: filepath.ToSlash(rel), Data: b, More: more})
		return nil
	})
	return out, errors.Join(append(errs, err)...)
}

// WriteOwnFile makes the file at path, one of dsh's own (settings, state),
// hold data: written beside it, synced and renamed over it, so a reader or a
// crash sees the old file or the new one, never a part; and whatever stood
// at path (a link a command planted) is replaced, not written through. Its
// directory is made, 0700, if missing.
func WriteOwnFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
