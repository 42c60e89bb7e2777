package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// replaceBuffer is the write buffer between a fill function and the temporary
	// file: large enough that an edit with millions of small sites costs few
	// syscalls.
	replaceBuffer = 1 << 20
	// tempSuffix ends the name of every temporary file Replace makes.
	tempSuffix = ".dsh-tmp"
	// tempStale is how old an unlocked temporary file must be before the next
	// write to its directory removes it. The lock is what protects a running
	// write; the age only covers the instant between creating a temporary file
	// and locking it.
	tempStale = 10 * time.Second
	// tempScan bounds the directory entries one write looks through for stale
	// temporary files.
	tempScan = 10000
)

// Replace replaces the file with what fill writes, so that a reader sees the old
// content or the new, never a torn mix, and a crash leaves the old file: fill
// streams into a locked temporary file in the same directory, which is synced
// and renamed over the file. The temporary file has no name while it is filled
// (where the file system allows), so a kill -9 then leaves nothing behind.
// Creating, filling and renaming all happen inside one opened directory, so the
// new file lands exactly beside its temporary one. An existing file keeps its
// mode; a new one gets the usual 0666 less the umask, and its missing parent
// directories are created. The first write to a directory removes the
// temporary files that interrupted writes (a kill -9 of an earlier dsh) left
// there; later ones in the same workspace skip the scan, since a write of this
// process removes its own temporary file when it fails.
// Replace returns the new file's description.
func (f File) Replace(fill func(io.Writer) error) (fs.FileInfo, error) {
	dir, name := filepath.Dir(f.rel), filepath.Base(f.rel)
	if f.rel == "." {
		return nil, errors.New("it is a directory")
	}
	if err := f.w.base.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	d, err := f.w.base.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	perm, keep := os.FileMode(0o666), false
	fi, err := d.Lstat(name)
	switch {
	case err == nil && fi.Mode().IsRegular():
		perm = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keep = true
	case err == nil && fi.IsDir():
		return nil, errors.New("it is a directory")
	case err == nil:
		// Located as a file, it has since become a link or something else.
		return nil, errors.New("it is not a regular file")
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if _, seen := f.w.swept.LoadOrStore(dir, true); !seen {
		removeStaleTemps(d, tempStale)
		f.w.journal(dir)
	}
	err = replaceUnnamed(d, name, keep, perm, fill)
	if errors.Is(err, errNoUnnamed) {
		err = replaceNamed(d, name, keep, perm, fill)
	}
	if err != nil {
		return nil, err
	}
	// Make the rename itself durable; a directory that cannot be synced (some
	// file systems refuse) still holds the new file.
	if dh, err := d.Open("."); err == nil {
		_ = dh.Sync()
		_ = dh.Close()
	}
	return d.Lstat(name)
}

// errNoUnnamed: the file system (or a missing /proc) cannot give a file its
// name after it is written.
var errNoUnnamed = errors.New("no unnamed temporary files here")

// replaceUnnamed fills a file that has no name yet (O_TMPFILE), so that a
// kill -9 while it is written leaves nothing behind, then links it under a
// temporary name and renames that over name: only a kill in the instant
// between those two calls leaves a temporary file, for the next write's sweep.
func replaceUnnamed(d *os.Root, name string, keep bool, perm os.FileMode, fill func(io.Writer) error) error {
	dh, err := d.Open(".")
	if err != nil {
		return err
	}
	defer func() { _ = dh.Close() }()
	dfd := int(dh.Fd())
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
			return errNoUnnamed
		}
		return err
	}
	tmp := os.NewFile(uintptr(fd), name)
	defer func() { _ = tmp.Close() }()
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	if _, err := os.Lstat(proc); err != nil {
		return errNoUnnamed // no /proc to link it through
	}
	// Locked before it has a name, so the sweep never takes it for stale.
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("lock the new %s: %w", name, err)
	}
	if err := fillTemp(tmp, keep, perm, fill); err != nil {
		return err
	}
	for range 100 {
		tmpName := tempName(name)
		err := unix.Linkat(unix.AT_FDCWD, proc, dfd, tmpName, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return err
		}
		if err := d.Rename(tmpName, name); err != nil {
			_ = d.Remove(tmpName)
			return err
		}
		return nil
	}
	return errors.New("cannot name the new file")
}

// replaceNamed fills a named, locked temporary file and renames it over name.
func replaceNamed(d *os.Root, name string, keep bool, perm os.FileMode, fill func(io.Writer) error) error {
	tmp, tmpName, err := createTemp(d, name, perm.Perm())
	if err != nil {
		return err
	}
	if err := fillTemp(tmp, keep, perm, fill); err != nil {
		_ = tmp.Close()
		_ = d.Remove(tmpName)
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = d.Remove(tmpName)
		return err
	}
	if err := d.Rename(tmpName, name); err != nil {
		_ = d.Remove(tmpName)
		return err
	}
	return nil
}

func fillTemp(f *os.File, keep bool, perm os.FileMode, fill func(io.Writer) error) error {
	if keep {
		// The umask may have narrowed the mode the file was opened with, and
		// the open mode carries no setuid, setgid or sticky bits.
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(f)
	defer func() {
		bw.Reset(nil)
		writers.Put(bw)
	}()
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// writers recycles the write buffers: allocating a megabyte for every small
// write is most of its cost.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, replaceBuffer) }}

// createTemp creates a new hidden file .NAME.<16 hex>.dsh-tmp in d and locks it
// for as long as it is open, which tells removeStaleTemps it is in use.
func createTemp(d *os.Root, base string, perm os.FileMode) (*os.File, string, error) {
	for range 100 {
		name := tempName(base)
		f, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			_ = d.Remove(name)
			return nil, "", fmt.Errorf("lock %s: %w", name, err)
		}
		return f, name, nil
	}
	return nil, "", errors.New("cannot create a temporary file")
}

// tempName is a new name .NAME.<16 hex>.dsh-tmp for a temporary file of base.
func tempName(base string) string {
	if len(base) > 200 { // stay under NAME_MAX with the suffix
		base = base[:200]
	}
	return fmt.Sprintf(".%s.%016x%s", base, rand.Uint64(), tempSuffix)
}

// isTempName reports whether name has the shape createTemp gives.
func isTempName(name string) bool {
	rest, ok := strings.CutSuffix(name, tempSuffix)
	if !ok || !strings.HasPrefix(rest, ".") || len(rest) < 1+1+1+16 {
		return false
	}
	hex, dot := rest[len(rest)-16:], rest[len(rest)-17]
	if dot != '.' {
		return false
	}
	for _, c := range hex {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// removeStaleTemps removes the temporary files of interrupted writes from d: a
// regular file with createTemp's name shape, older than age, that no one
// holds locked. A failure only leaves the file for a later write.
func removeStaleTemps(d *os.Root, age time.Duration) {
	dh, err := d.Open(".")
	if err != nil {
		return
	}
	names, _ := dh.Readdirnames(tempScan)
	_ = dh.Close()
	for _, name := range names {
		if !isTempName(name) {
			continue
		}
		fi, err := d.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < age {
			continue
		}
		removeIfUnlocked(d, name, fi)
	}
}

func removeIfUnlocked(d *os.Root, name string, fi fs.FileInfo) {
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	if cur, err := f.Stat(); err != nil || !os.SameFile(cur, fi) {
		return
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // a write in progress
	}
	_ = d.Remove(name)
}

// The journal: a kill -9 in the instant between naming a temporary file and
// renaming it over its file leaves the temporary file, which only a later
// write to that directory would remove. So the first write to a directory
// notes the directory in a small file outside the workspace, and the next
// session of the workspace (SweepJournal) clears those directories as it
// opens.

// UseJournal makes path the workspace's journal of the directories it writes
// in, after clearing those the last one noted of the temporary files of
// writes that were killed.
func (w *Workspace) UseJournal(path string) {
	w.journalPath = path
	b, _, err := ReadOwnFile(path, maxJournal)
	if err != nil || len(b) == 0 {
		return
	}
	for dir := range strings.SplitSeq(string(b), "\n") {
		if dir == "" || !filepath.IsLocal(dir) && dir != "." {
			continue
		}
		if d, err := w.base.OpenRoot(dir); err == nil {
			// Locked files are writes in progress (another session's);
			// an unlocked one is an interrupted write's, whatever its age.
			removeStaleTemps(d, 0)
			_ = d.Close()
		}
	}
	_ = os.Truncate(path, 0)
}

// maxJournal bounds the journal read at open; past it, directories are left to
// their next write's sweep.
const maxJournal = 1 << 20

// journal notes dir (relative to the base) in the journal, once per process.
func (w *Workspace) journal(dir string) {
	if w.journalPath == "" {
		return
	}
	f, err := os.OpenFile(w.journalPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) && os.MkdirAll(filepath.Dir(w.journalPath), 0o700) == nil {
		f, err = os.OpenFile(w.journalPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	}
	if err != nil {
		return
	}
	_, _ = f.WriteString(dir + "\n")
	_ = f.Close()
}
