package fs

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/dsh-dev/dsh/internal/tool"
)

// stamp is what a session last saw of a file: enough to tell that someone else
// changed it since.
type stamp struct {
	modTime time.Time
	size    int64
}

// stamps is the session's record of the files it has read or written. It is session
// state (tool.Session.State), never global: two sessions on one workspace each
// must read a file before changing it.
type stamps struct {
	mu sync.Mutex
	m  map[string]stamp
}

type stampsKey struct{}

func sessionStamps(s *tool.Session) *stamps {
	return s.State(stampsKey{}, func() any { return &stamps{m: map[string]stamp{}} }).(*stamps)
}

// record notes that the session has seen abs as it is now on disk.
func (st *stamps) record(abs string, fi os.FileInfo) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.m[abs] = stamp{modTime: fi.ModTime(), size: fi.Size()}
}

// check refuses a change to an existing file the session has not read, or that
// changed on disk since the session last read or wrote it. display is the path as
// the model gave it.
func (st *stamps) check(abs, display string, fi os.FileInfo) error {
	st.mu.Lock()
	s, ok := st.m[abs]
	st.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s has not been read in this session. Read it first with the read tool, then retry", display)
	}
	if !s.modTime.Equal(fi.ModTime()) || s.size != fi.Size() {
		return fmt.Errorf("%s has changed on disk since this session last read it. Read it again, then retry", display)
	}
	return nil
}
