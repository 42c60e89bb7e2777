package tool

import (
	"bytes"
	"testing"
)

// held is what m holds: how many entries and the bytes they were decoded from.
func held[V any](m *memo[V]) (n, size int) {
	for _, e := range m.ent {
		if e.raw != nil {
			n++
			size += len(e.raw)
		}
	}
	return n, size
}

func TestMemoBounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int // bytes of each put, in order
		wantN int   // entries held after
	}{
		{"small ones: the last MemoSize", repeatSize(MemoSize+10, 100), MemoSize},
		{"large ones: memoBytes of them", repeatSize(20, 1<<20), memoBytes / (1 << 20)},
		{"one larger than memoBytes stays alone", append(repeatSize(3, 100), memoBytes+1), 1},
		{"small after a huge one", append([]int{memoBytes + 1}, repeatSize(3, 100)...), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m memo[int]
			var raws [][]byte
			for i, n := range tc.sizes {
				raw := bytes.Repeat([]byte{'x'}, n)
				raws = append(raws, raw)
				m.put(raw, i)
			}
			n, size := held(&m)
			if n != tc.wantN {
				t.Errorf("holds %d entries, want %d", n, tc.wantN)
			}
			if size != m.bytes {
				t.Errorf("counts %d bytes, holds %d", m.bytes, size)
			}
			if n > 1 && size > memoBytes {
				t.Errorf("holds %d bytes in %d entries, past %d", size, n, memoBytes)
			}
			last := len(raws) - 1
			if v, ok := m.get(raws[last]); !ok || v != last {
				t.Errorf("the newest: %d, %v; want %d, true", v, ok, last)
			}
		})
	}
}

// An entry is found by its bytes' identity: equal bytes elsewhere are another
// record's, which may decode differently (its tool's state).
func TestMemoFindsTheSameBytes(t *testing.T) {
	var m memo[string]
	a := []byte(`{"path":"a"}`)
	m.put(a, "decoded a")
	if v, ok := m.get(a); !ok || v != "decoded a" {
		t.Errorf("get(a) = %q, %v", v, ok)
	}
	if _, ok := m.get(bytes.Clone(a)); ok {
		t.Error("a copy of a's bytes is found")
	}
}

func repeatSize(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}
