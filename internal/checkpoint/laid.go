package checkpoint

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// laidFile is the entry a file laid over the index's tree was read as, with
// its stat then.
type laidFile struct {
	fi os.FileInfo
	e  Entry
}

// settled is how long before a read a file's modification time must be for
// its stat to vouch for its content later: a write just after the read can
// leave the same time (the kernel stamps files with a coarse clock, and some
// file systems keep whole seconds), as git's "racily clean" entries.
const settled = time.Second

// laidEntry is the entry of the file at slash path p as it is now, read
// (hashed and stored) unless it was laid before and its stat is unchanged
// since: files a command made pile up untracked between index writes, and
// each walk finds them all again. What it read is kept in next, which
// becomes s.laid once the walk is laid. ok is false for what ReadState
// cannot take.
func (s *Store) laidEntry(p, like string, next map[string]laidFile) (Entry, bool) {
	fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p)))
	if err == nil && fi.Mode().IsRegular() {
		if old, hit := s.laid[p]; hit && sameStat(old.fi, fi) {
			next[p] = old
			return old.e, true
		}
	}
	read := time.Now()
	st, ok := ReadState(s.root, p, s.o.MaxFile)
	if !ok {
		return Entry{}, false
	}
	if st.Absent {
		return Entry{}, true
	}
	e := Entry{Mode: st.mode(), ID: objectID("blob", st.Content, like)}
	if s.store("blob", e.ID, st.Content) != nil {
		return Entry{}, false
	}
	// Only a stat taken before the read, of a file left alone long enough,
	// vouches for what was read.
	if err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(read.Add(-settled)) && int64(len(st.Content)) == fi.Size() {
		next[p] = laidFile{fi, e}
	}
	return e, true
}

// sameStat says a and b are the same file unchanged, as git's stat cache
// tells: the same inode, size, mode, modification and change times (a
// modification time set back, as touch -d does, moves the change time).
func sameStat(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && os.SameFile(a, b) && a.Size() == b.Size() && a.Mode() == b.Mode() &&
		a.ModTime().Equal(b.ModTime()) && sa.Ctim == sb.Ctim
}
