package tool

import (
	"sync"
	"unsafe"
)

// MemoSize covers the records a reload has in flight between fold and replay
// (host's replay queue), so that the replay finds each record's meta decoded.
const MemoSize = 128

// memoBytes bounds the bytes a memo's entries were decoded from. A reload
// has at most about a MiB of records in flight (see host's maxInflight), so
// this still covers them; without it a session kept the last 64 calls of
// each tool decoded, its largest writes and reads among them, for as long as
// it stayed open (80 writes of 512 KiB: 33 MiB of the 73 a reload held).
const memoBytes = 4 << 20

// memo holds values decoded from the bytes seen last, found again by the
// bytes' identity (the same slice, not equal contents). Past MemoSize
// entries or memoBytes of bytes the oldest go; the newest always stays.
type memo[V any] struct {
	mu    sync.Mutex
	next  int
	bytes int
	ent   *[MemoSize]memoEntry[V] // made at the first put: most tools are never called
}

type memoEntry[V any] struct {
	raw []byte
	v   V
}

// get is the value decoded from raw, if it is still held.
func (m *memo[V]) get(raw []byte) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ent != nil {
		for i := range m.ent {
			if e := &m.ent[i]; len(e.raw) == len(raw) && unsafe.SliceData(e.raw) == unsafe.SliceData(raw) {
				return e.v, true
			}
		}
	}
	var zero V
	return zero, false
}

// put holds v, decoded from raw.
func (m *memo[V]) put(raw []byte, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ent == nil {
		m.ent = new([MemoSize]memoEntry[V])
	}
	newest := m.next
	m.bytes += len(raw) - len(m.ent[newest].raw)
	m.ent[newest] = memoEntry[V]{raw: raw, v: v}
	m.next = (m.next + 1) % MemoSize
	for i := m.next; m.bytes > memoBytes && i != newest; i = (i + 1) % MemoSize {
		m.bytes -= len(m.ent[i].raw)
		m.ent[i] = memoEntry[V]{}
	}
}
