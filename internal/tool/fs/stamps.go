package fs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"sync"

	"github.com/dsh-dev/dsh/internal/tool"
)

// stamps is the session's record of the files it has read or written, keyed by
// their real path. It is session state (tool.Session.State), never global: two
// sessions on one workspace each must read a file before changing it. It is
// derived from the log alone — each read, write and edit result's meta carries
// its stamp, which Fold records — so a reloaded session knows what it knew.
type stamps struct {
	mu sync.Mutex
	m  map[string]fileStamp
}

type stampsKey struct{}

func sessionStamps(s *tool.Session) *stamps {
	return s.State(stampsKey{}, func() any { return &stamps{m: map[string]fileStamp{}} }).(*stamps)
}

// record notes that the session has seen the file as s describes it.
func (st *stamps) record(s fileStamp) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.m[s.Path] = s
}

// check refuses a change to an existing file the session has not read, or that
// changed on disk since the session last read or wrote it. display is the path as
// the model gave it.
func (st *stamps) check(cur *fileStamp, display string) error {
	st.mu.Lock()
	s, ok := st.m[cur.Path]
	st.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s has not been read in this session. Read it first with the read tool, then retry", display)
	}
	if !s.same(cur) {
		return fmt.Errorf("%s has changed on disk since this session last read it. Read it again, then retry", display)
	}
	return nil
}

// foldStamp records the stamp a successful result carries.
func foldStamp(s *tool.Session, r tool.Result, st *fileStamp) {
	if r.IsError || st == nil {
		return
	}
	sessionStamps(s).record(*st)
}

// prefixHash hashes the first stampHashBytes bytes written to it.
type prefixHash struct {
	h hash.Hash
	n int64
}

func newPrefixHash() *prefixHash { return &prefixHash{h: sha256.New()} }

func (p *prefixHash) Write(b []byte) (int, error) {
	if room := stampHashBytes - p.n; room > 0 {
		k := min(int64(len(b)), room)
		p.h.Write(b[:k])
		p.n += k
	}
	return len(b), nil
}

func (p *prefixHash) sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

// stampOf describes the file at real from its description and its hash.
func stampOf(real string, fi os.FileInfo, h *prefixHash) *fileStamp {
	return &fileStamp{Path: real, Size: fi.Size(), MTime: fi.ModTime().UnixNano(), CTime: fileCTime(fi), SHA256: h.sum()}
}

// stampData stamps content read whole.
func stampData(real string, fi os.FileInfo, data []byte) *fileStamp {
	h := newPrefixHash()
	_, _ = h.Write(data)
	return stampOf(real, fi, h)
}
