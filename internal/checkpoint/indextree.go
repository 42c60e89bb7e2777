package checkpoint

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// treeSuffix names the file beside an index that says which tree the index
// was last written to: "<the index's checksum> <tree>". A process's first
// walk then lays what changed over that tree, as later walks do, instead of
// rewriting the whole index twice (update-index, write-tree: most of a warm
// walk's time on a large tree). The checksum is the one git ends the index
// with, so a note that does not match the index (it changed since, or the
// note is torn) is not used.
const treeSuffix = ".tree"

// noteTree writes the tree the index holds now (just written by write-tree).
func (s *Store) noteTree(tree string) {
	sum, _, ok := indexSum(s.index, len(tree)/2)
	if !ok {
		_ = os.Remove(s.index + treeSuffix)
		return
	}
	putNote(s.index, fmt.Appendf(nil, "%s %s\n", sum, tree))
}

// putNote replaces index's tree note with b whole: a reader sees the old
// note or the new one.
func putNote(index string, b []byte) {
	tmp := index + treeSuffix + ".lock"
	if os.WriteFile(tmp, b, 0o600) != nil || os.Rename(tmp, index+treeSuffix) != nil {
		_ = os.Remove(tmp)
	}
}

// recallTree sets the tree the index was last written to from its note, if
// the note matches it and the tree is in the store.
func (s *Store) recallTree() {
	b, err := os.ReadFile(s.index + treeSuffix)
	if err != nil {
		return
	}
	sum, tree, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok || (len(tree) != 40 && len(tree) != 64) || !isHex(tree) {
		return
	}
	got, fi, ok := indexSum(s.index, len(tree)/2)
	if !ok || got != sum {
		return
	}
	if _, err := s.readTree(tree); err != nil {
		return // packed or gone: the index is written again, as before
	}
	s.last.tree, s.last.fi = tree, fi
}

// indexSum is the checksum the index file ends with (n bytes, hex), and the
// file's stat as read; ok is false for an index without one (git's
// index.skipHash writes zeros).
func indexSum(index string, n int) (string, os.FileInfo, bool) {
	f, err := os.Open(index)
	if err != nil {
		return "", nil, false
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < int64(12+n) {
		return "", nil, false
	}
	sum := make([]byte, n)
	if _, err := f.ReadAt(sum, fi.Size()-int64(n)); err != nil || bytes.Count(sum, []byte{0}) == n {
		return "", nil, false
	}
	return hex.EncodeToString(sum), fi, true
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// seedTree copies the note of the index seeded from beside the new one.
func seedTree(from, index string) {
	b, err := os.ReadFile(from + treeSuffix)
	if err != nil {
		return
	}
	putNote(index, b)
}
