package bash

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ring keeps the last size bytes written to it and counts everything ever written,
// so that memory stays bounded however much a command prints.
type ring struct {
	size  int
	buf   []byte // grows to size; once full, circular with the oldest byte at buf[w]
	w     int
	total int64
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.total += int64(n)
	if len(p) >= r.size {
		if cap(r.buf) < r.size {
			r.buf = make([]byte, r.size)
		}
		r.buf = r.buf[:r.size]
		copy(r.buf, p[len(p)-r.size:])
		r.w = 0
		return n, nil
	}
	if len(r.buf) < r.size {
		k := min(r.size-len(r.buf), len(p))
		if len(r.buf)+k > cap(r.buf) {
			// Grow by doubling but never past size: append would overshoot it.
			grown := make([]byte, len(r.buf), min(r.size, max(2*cap(r.buf), len(r.buf)+k)))
			copy(grown, r.buf)
			r.buf = grown
		}
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(r.buf[r.w:], p)
		p = p[k:]
		r.w = (r.w + k) % r.size
	}
	return n, nil
}

// since returns the bytes written from absolute offset off on, and how many of
// those the ring no longer holds.
func (r *ring) since(off int64) (data []byte, dropped int64) {
	oldest := r.total - int64(len(r.buf))
	if off < oldest {
		dropped = oldest - off
		off = oldest
	}
	if off >= r.total {
		return nil, dropped
	}
	start := (r.w + int(off-oldest)) % len(r.buf)
	n := int(r.total - off)
	data = make([]byte, 0, n)
	end := min(start+n, len(r.buf))
	data = append(data, r.buf[start:end]...)
	data = append(data, r.buf[:n-(end-start)]...)
	return data, dropped
}

// headTail keeps the first headCap and the last tailCap bytes of a stream: what a
// model needs of a long output is how it started and how it ended.
type headTail struct {
	headCap int
	head    []byte
	tail    *ring
	lines   int64 // line ends written, kept or not
	last    byte  // the last byte written
}

func newHeadTail(headCap, tailCap int) *headTail {
	return &headTail{headCap: headCap, tail: newRing(tailCap)}
}

func (b *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 {
		b.lines += int64(bytes.Count(p, []byte{'\n'}))
		b.last = p[n-1]
	}
	if k := min(b.headCap-len(b.head), len(p)); k > 0 {
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		_, _ = b.tail.Write(p)
	}
	return n, nil
}

// total is the number of bytes written.
func (b *headTail) total() int64 { return int64(len(b.head)) + b.tail.total }

func (b *headTail) empty() bool { return b.total() == 0 }

// totalLines is how many lines were written, a last one without its end
// included.
func (b *headTail) totalLines() int64 {
	if b.total() > 0 && b.last != '\n' {
		return b.lines + 1
	}
	return b.lines
}

// omitted is the number of bytes between the head and the tail that were dropped.
func (b *headTail) omitted() int64 { return b.tail.total - int64(len(b.tail.buf)) }

// String returns the kept text as valid UTF-8, with a marker where bytes were
// dropped. A rune cut in two by the marker is dropped rather than mangled.
func (b *headTail) String() string {
	tail, _ := b.tail.since(0)
	if b.omitted() == 0 {
		return sanitize(append(append([]byte(nil), b.head...), tail...))
	}
	head, cut := splitIncomplete(b.head)
	trimmed := trimContinuation(tail)
	n := b.omitted() + int64(len(cut)+len(tail)-len(trimmed))
	return sanitize(head) + omittedMarker(n) + sanitize(trimmed)
}

func omittedMarker(n int64) string {
	return fmt.Sprintf("\n… %d bytes omitted …\n", n)
}

// sanitize makes b valid UTF-8, replacing invalid bytes with U+FFFD.
func sanitize(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// splitIncomplete splits b before a trailing rune that is cut short, if any.
func splitIncomplete(b []byte) (complete, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], b[i:]
			}
			break
		}
	}
	return b, nil
}

// trimContinuation drops the continuation bytes of a rune whose start was cut off.
func trimContinuation(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
