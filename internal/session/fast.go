package session

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// decodeFast decodes the records dsh writes most — messages, tool calls and
// their results, turn ends — without reflection: a reload reads every line of
// a long log. It knows only the plainest form of each member (strings without
// \u escapes, integers without fraction or exponent, no nulls, names without
// escapes) and reports false for anything else, which json.Unmarshal then
// decodes, or refuses, as it always did. What it does accept, it decodes to
// exactly what json.Unmarshal makes of it (FuzzDecodeFast compares the two),
// invalid JSON, duplicate names and invalid UTF-8 included.
func decodeFast(line []byte, r *Record) bool {
	d := fastReader{b: line}
	ok := d.object(func(name []byte) bool {
		switch string(name) {
		case "type":
			s, ok := d.str()
			r.Type = RecordType(s)
			return ok
		case "time":
			return d.time(&r.Time)
		case "version":
			return d.int(&r.Version)
		case "keep":
			return d.int(&r.Keep)
		case "continues":
			return d.bool(&r.Continues)
		case "args":
			return d.raw(&r.Args)
		case "preview":
			return d.raw(&r.Preview)
		case "result":
			r.Result = new(tool.Result)
			return d.result(r.Result)
		case "usage":
			r.Usage = new(Usage)
			return d.usage(r.Usage)
		}
		if p := r.stringField(name); p != nil {
			s, ok := d.str()
			*p = s
			return ok
		}
		return false // content, plan, keys, or unknown: left to json.Unmarshal
	})
	d.space()
	return ok && d.i == len(d.b)
}

// stringField is the string member of r with that name, or nil.
func (r *Record) stringField(name []byte) *string {
	switch string(name) {
	case "sessionId":
		return &r.SessionID
	case "cwd":
		return &r.Cwd
	case "system":
		return &r.System
	case "text":
		return &r.Text
	case "signature":
		return &r.Signature
	case "callId":
		return &r.CallID
	case "name":
		return &r.Name
	case "chunk":
		return &r.Chunk
	case "stopReason":
		return &r.StopReason
	case "error":
		return &r.Error
	case "mode":
		return &r.Mode
	case "focus":
		return &r.Focus
	case "path":
		return &r.Path
	case "model":
		return &r.Model
	case "thinking":
		return &r.Thinking
	}
	return nil
}

func (d *fastReader) result(res *tool.Result) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "content":
			return d.array(func() bool {
				var c card.Content
				ok := d.object(func(name []byte) bool {
					var p *string
					switch string(name) {
					case "type":
						s, ok := d.str()
						c.Type = card.ContentType(s)
						return ok
					case "text":
						p = &c.Text
					case "data":
						p = &c.Data
					case "mimeType":
						p = &c.MimeType
					case "uri":
						p = &c.URI
					default:
						return false
					}
					s, ok := d.str()
					*p = s
					return ok
				})
				res.Content = append(res.Content, c)
				return ok
			}) && res.Content != nil
		case "isError":
			return d.bool(&res.IsError)
		case "meta":
			return d.raw(&res.Meta)
		}
		return false
	})
}

func (d *fastReader) usage(u *Usage) bool {
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "inputTokens":
			return d.int64(&u.InputTokens)
		case "outputTokens":
			return d.int64(&u.OutputTokens)
		case "contextTokens":
			return d.int64(&u.ContextTokens)
		}
		return false
	})
}

// fastReader reads JSON from b at i. Every method reports false, leaving the
// reader anywhere, for input it does not take.
type fastReader struct {
	b []byte
	i int
}

func (d *fastReader) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *fastReader) peek() byte {
	d.space()
	if d.i == len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// object reads an object, calling member with each name; member reads the
// value. A name seen twice is refused, as json.Unmarshal refuses it.
func (d *fastReader) object(member func(name []byte) bool) bool {
	if d.peek() != '{' {
		return false
	}
	d.i++
	var seen [16][2]int32 // the names so far, as offsets (an array of slices costs more to clear)
	n := 0
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		if d.peek() != '"' {
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
		if d.peek() != ':' {
			return false
		}
		d.i++
		if !member(name) {
			return false
		}
		switch d.peek() {
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

// array reads an array, calling elem for each element.
func (d *fastReader) array(elem func() bool) bool {
	if d.peek() != '[' {
		return false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch d.peek() {
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
func (d *fastReader) scanString() (end int, escaped, ok bool) {
	i := d.i + 1
	ascii := true
	for i < len(d.b) {
		// Eight bytes at a time past those that need no look: most are.
		for i+8 <= len(d.b) && plain8(binary.LittleEndian.Uint64(d.b[i:])) {
			i += 8
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

// plain8 reports whether none of the eight bytes in x is a quote, a
// backslash, a control character or not ASCII.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs } // high bit set where a byte of v is 0
	control := (x - ones*0x20) &^ x & highs                          // bytes below 0x20 (for ASCII bytes)
	return (x|control|zero(x^ones*'"')|zero(x^ones*'\\'))&highs == 0
}

func (d *fastReader) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	end, escaped, ok := d.scanString()
	if !ok {
		return "", false
	}
	if !escaped {
		return string(d.b[start:end]), true
	}
	out := make([]byte, 0, end-start)
	for i := start; i < end; {
		j := i + bytes.IndexByte(d.b[i:end], '\\')
		if j < i { // no more escapes
			out = append(out, d.b[i:end]...)
			break
		}
		out = append(out, d.b[i:j]...)
		c := d.b[j+1]
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
	return unsafe.String(unsafe.SliceData(out), len(out)), true // out is not written again
}

// int64 reads an integer: an optional minus and digits without a leading zero.
func (d *fastReader) int64(p *int64) bool {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
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
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	*p = v
	return err == nil
}

func (d *fastReader) int(p *int) bool {
	var v int64
	ok := d.int64(&v) && int64(int(v)) == v
	*p = int(v)
	return ok
}

func (d *fastReader) bool(p *bool) bool {
	d.space()
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
func (d *fastReader) literalEnd() bool {
	if d.i == len(d.b) {
		return true
	}
	switch d.b[d.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// time reads the form dsh writes, 2006-01-02T15:04:05.999999999Z, as
// json.Unmarshal reads a time.
func (d *fastReader) time(p *time.Time) bool {
	if d.peek() != '"' {
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

// raw reads a JSON value verbatim, checked as json.Unmarshal checks a
// jsontext.Value: valid JSON, no name twice in an object, valid UTF-8.
func (d *fastReader) raw(p *jsontext.Value) bool {
	d.space()
	start := d.i
	if !d.skip(0) {
		return false
	}
	*p = append(jsontext.Value(nil), d.b[start:d.i]...)
	return true
}

// skip moves past one value; depth bounds the nesting it takes.
func (d *fastReader) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	switch d.peek() {
	case '{':
		return d.object(func([]byte) bool { return d.skip(depth + 1) })
	case '[':
		return d.array(func() bool { return d.skip(depth + 1) })
	case '"':
		_, _, ok := d.scanString()
		return ok
	case 't', 'f':
		var b bool
		return d.bool(&b)
	case 'n':
		if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
			d.i += 4
			return d.literalEnd()
		}
		return false
	default:
		var v int64
		return d.int64(&v) && d.literalEnd()
	}
}
