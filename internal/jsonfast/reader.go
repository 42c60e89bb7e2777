// Package jsonfast reads the plainest JSON without reflection: strings
// without \u escapes, integers without fraction or exponent, no nulls, names
// without escapes. Everything else makes it report false, and the caller then
// decodes the input with json.Unmarshal, which decodes or refuses it as it
// always did. What it does take, it takes as json.Unmarshal would: invalid
// JSON, duplicate names and invalid UTF-8 are refused. A reload reads every
// line of a long log, and every tool result's meta in it, this way.
package jsonfast

import (
	"bytes"
	"math"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Reader reads JSON from b at i. Every method reports false, leaving the
// reader anywhere, for input it does not take.
type Reader struct {
	b []byte
	i int
	// Decode's strings inside arrays are copied into strs, and its slices of
	// values without pointers carved out of words: a search's meta holds
	// hundreds of lines, each a string and a slice of ranges, and one
	// allocation apiece was most of what a reload allocated. A string (or a
	// slice) of them keeps the whole block alive, so only the elements of
	// arrays share one — a lone top-level string (a path a fold keeps) does not
	// pin the meta. What is written there is never written again.
	inArray int
	strs    []byte
	words   []uint64
}

// NewReader reads b from its start.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Reset makes d a reader of b from its start, as NewReader would: a reader of
// every line of a log is one value, not one allocation a line.
func (d *Reader) Reset(b []byte) { *d = Reader{b: b} }

// Offset is where the next value starts; Seek goes back there and Since
// returns the input read from there.
func (d *Reader) Offset() int {
	d.Space()
	return d.i
}

// Seek moves the reader back to an Offset.
func (d *Reader) Seek(off int) { d.i = off }

// Since is the input from an Offset to the reader's position, not a copy.
func (d *Reader) Since(off int) []byte { return d.b[off:d.i] }

// End reports whether nothing but whitespace is left.
func (d *Reader) End() bool {
	d.Space()
	return d.i == len(d.b)
}

// Space skips whitespace.
func (d *Reader) Space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// Peek skips whitespace and returns the next byte (0 at the end).
func (d *Reader) Peek() byte {
	if d.i < len(d.b) && d.b[d.i] > ' ' { // dsh writes no whitespace
		return d.b[d.i]
	}
	d.Space()
	if d.i == len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// Object reads an object, calling member with each name; member reads the
// value. A name seen twice is refused, as json.Unmarshal refuses it.
func (d *Reader) Object(member func(name []byte) bool) bool {
	if d.Peek() != '{' {
		return false
	}
	d.i++
	var seen [16][2]int32 // the names so far, as offsets (an array of slices costs more to clear)
	n := 0
	if d.Peek() == '}' {
		d.i++
		return true
	}
	for {
		if d.Peek() != '"' {
			return false
		}
		start := d.i + 1
		end, escaped, ok := d.scanString()
		if !ok || escaped || n == len(seen) {
			return false
		}
		name := d.b[start:end]
		for _, s := range seen[:n] {
			if string(d.b[s[0]:s[1]]) == string(name) {
				return false
			}
		}
		seen[n] = [2]int32{int32(start), int32(end)}
		n++
		if d.Peek() != ':' {
			return false
		}
		d.i++
		if !member(name) {
			return false
		}
		switch d.Peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// Array reads an array, calling elem for each element.
func (d *Reader) Array(elem func() bool) bool {
	if d.Peek() != '[' {
		return false
	}
	d.i++
	if d.Peek() == ']' {
		d.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.Peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// scanString moves past the string that starts at i (its quote) and returns
// where its content ends and whether it has escapes. It accepts only the
// two-character escapes and valid UTF-8.
func (d *Reader) scanString() (end int, escaped, ok bool) {
	i := d.i + 1
	ascii := true
	for i < len(d.b) {
		for i < len(d.b) && !stringStop[d.b[i]] {
			i++
		}
		if i == len(d.b) {
			break
		}
		c := d.b[i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(d.b[d.i+1:i]) {
				return 0, false, false
			}
			d.i = i + 1
			return i, escaped, true
		case c == '\\':
			if i+1 == len(d.b) {
				return 0, false, false
			}
			switch d.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return 0, false, false // \u: left to json.Unmarshal
			}
			escaped = true
			i += 2
			continue
		case c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	return 0, false, false
}

// stringStop holds the bytes scanString looks at: a quote, a backslash, a
// control character or a byte that is not ASCII. It passes the runs of the
// others in a tight loop: most strings are short, and a table beat eight bytes
// at a time on them.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Str reads a string.
func (d *Reader) Str() (string, bool) {
	if d.Peek() != '"' {
		return "", false
	}
	start := d.i + 1
	end, escaped, ok := d.scanString()
	if !ok {
		return "", false
	}
	if d.inArray > 0 && end > start {
		return d.shared(start, end, escaped), true
	}
	if !escaped {
		return string(d.b[start:end]), true
	}
	out := unescape(make([]byte, 0, end-start), d.b[start:end])
	return unsafe.String(unsafe.SliceData(out), len(out)), true // out is not written again
}

// StrIn reads a string, returned as the one of known it equals if any: a
// value of a few (a record's type) is then not allocated for every line.
func (d *Reader) StrIn(known []string) (string, bool) {
	if d.Peek() != '"' {
		return "", false
	}
	start := d.i + 1
	i := d.i
	end, escaped, ok := d.scanString()
	if ok && !escaped {
		for _, k := range known {
			if string(d.b[start:end]) == k {
				return k, true
			}
		}
	}
	d.i = i
	return d.Str()
}

// shared is the string of b[start:end] (with escapes if escaped) in strs.
func (d *Reader) shared(start, end int, escaped bool) string {
	if cap(d.strs)-len(d.strs) < end-start {
		// Unescaped, the strings left fit in what is left of the input; a
		// block of at most 8 KiB wastes little of it when they are a part.
		d.strs = make([]byte, 0, max(end-start, min(len(d.b)-start, 8<<10)))
	}
	at := len(d.strs)
	if escaped {
		d.strs = unescape(d.strs, d.b[start:end])
	} else {
		d.strs = append(d.strs, d.b[start:end]...)
	}
	return unsafe.String(&d.strs[at], len(d.strs)-at)
}

// unescape appends s, a string's content with two-character escapes only, unescaped.
func unescape(out, s []byte) []byte {
	for i := 0; i < len(s); {
		j := i + bytes.IndexByte(s[i:], '\\')
		if j < i { // no more escapes
			return append(out, s[i:]...)
		}
		out = append(out, s[i:j]...)
		c := s[j+1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		out = append(out, c)
		i = j + 2
	}
	return out
}

// Int64 reads an integer: an optional minus and digits without a leading zero.
func (d *Reader) Int64(p *int64) bool {
	d.Space()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	digits := d.i
	var u uint64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		if u > (math.MaxUint64-9)/10 {
			return false // far out of range
		}
		u = u*10 + uint64(d.b[d.i]-'0')
		d.i++
	}
	if d.i == digits || (d.b[digits] == '0' && d.i > digits+1) {
		return false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	switch {
	case !neg && u <= math.MaxInt64:
		*p = int64(u)
	case neg && u <= -math.MinInt64:
		*p = -int64(u)
	default:
		return false
	}
	return true
}

// Int reads an integer that fits an int.
func (d *Reader) Int(p *int) bool {
	var v int64
	ok := d.Int64(&v) && int64(int(v)) == v
	*p = int(v)
	return ok
}

// Bool reads true or false.
func (d *Reader) Bool(p *bool) bool {
	d.Space()
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		*p = true
		d.i += 4
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		*p = false
		d.i += 5
	default:
		return false
	}
	return d.literalEnd()
}

// literalEnd reports whether a literal or number ends where it should.
func (d *Reader) literalEnd() bool {
	if d.i == len(d.b) {
		return true
	}
	switch d.b[d.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// Time reads the form dsh writes, 2006-01-02T15:04:05.999999999Z, as
// json.Unmarshal reads a time.
func (d *Reader) Time(p *time.Time) bool {
	if d.Peek() != '"' {
		return false
	}
	start := d.i + 1
	end, escaped, ok := d.scanString()
	if !ok || escaped {
		return false
	}
	s := d.b[start:end]
	if len(s) < len("2006-01-02T15:04:05Z") || s[len(s)-1] != 'Z' || s[10] != 'T' || s[13] != ':' || s[19] != '.' && s[19] != 'Z' {
		return false
	}
	return p.UnmarshalText(s) == nil
}

// Raw reads a JSON value verbatim, checked as json.Unmarshal checks a
// jsontext.Value: valid JSON, no name twice in an object, valid UTF-8.
func (d *Reader) Raw(p *jsontext.Value) bool {
	d.Space()
	start := d.i
	if !d.Skip(0) {
		return false
	}
	*p = append(jsontext.Value(nil), d.b[start:d.i]...)
	return true
}

// Skip moves past one value; depth bounds the nesting it takes.
func (d *Reader) Skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch d.Peek() {
	case '{':
		return d.Object(func([]byte) bool { return d.Skip(depth + 1) })
	case '[':
		return d.Array(func() bool { return d.Skip(depth + 1) })
	case '"':
		_, _, ok := d.scanString()
		return ok
	case 't', 'f':
		var b bool
		return d.Bool(&b)
	case 'n':
		if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
			d.i += 4
			return d.literalEnd()
		}
		return false
	default:
		var v int64
		return d.Int64(&v) && d.literalEnd()
	}
}
