package checkpoint

import (
	"os"
	"path/filepath"
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
		if old, hit := s.laid[p]; hit && os.SameFile(old.fi, fi) && old.fi.Size() == fi.Size() &&
			old.fi.Mode() == fi.Mode() && old.fi.ModTime().Equal(fi.ModTime()) {
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
