package card

import (
	"strconv"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// The read and search results carry a file's lines and are encoded for every
// such call of a replayed session, so they are written by hand here, byte for
// byte what marshalTagged writes (FuzzDecode compares the two). Text that is
// not UTF-8, which marshalTagged refuses, is left to it.

func appendReadResult(dst []byte, c *ReadResult, html bool) ([]byte, bool) {
	dst = append(dst, `{"card":"read"`...)
	ok := true
	if c.Title != "" {
		dst, ok = appendMember(dst, "title", c.Title, ok, html)
	}
	dst, ok = appendMember(dst, "path", c.Path, ok, html)
	dst = appendInt(append(dst, `,"offset":`...), c.Offset)
	dst = append(dst, `,"lines":[`...)
	for i, l := range c.Lines {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendInt(append(dst, `{"number":`...), l.Number)
		dst, ok = appendMember(dst, "text", l.Text, ok, html)
		dst = append(dst, '}')
	}
	dst = appendInt(append(dst, `],"totalLines":`...), c.TotalLines)
	if c.TotalLinesAtLeast {
		dst = append(dst, `,"totalLinesAtLeast":true`...)
	}
	if c.Lang != "" {
		dst, ok = appendMember(dst, "lang", c.Lang, ok, html)
	}
	if len(c.Content) > 0 {
		dst = append(dst, `,"content":[`...)
		for i, b := range c.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, ok = appendContent(dst, b, ok, html)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), ok
}

func appendContent(dst []byte, c Content, ok, html bool) ([]byte, bool) {
	dst = append(dst, `{"type":`...)
	dst, ok = appendString(dst, string(c.Type), ok, html)
	for _, m := range [...]struct{ name, v string }{{"text", c.Text}, {"data", c.Data}, {"mimeType", c.MimeType}, {"uri", c.URI}} {
		if m.v != "" {
			dst, ok = appendMember(dst, m.name, m.v, ok, html)
		}
	}
	return append(dst, '}'), ok
}

func appendSearchResult(dst []byte, c *SearchResult, html bool) ([]byte, bool) {
	dst = append(dst, `{"card":"search"`...)
	ok := true
	if c.Title != "" {
		dst, ok = appendMember(dst, "title", c.Title, ok, html)
	}
	dst, ok = appendMember(dst, "query", c.Query, ok, html)
	dst, ok = appendMember(dst, "dir", c.Dir, ok, html)
	if len(c.Files) > 0 {
		dst = append(dst, `,"files":[`...)
		for i, f := range c.Files {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"path":`...)
			dst, ok = appendString(dst, f.Path, ok, html)
			dst = appendInt(append(dst, `,"count":`...), f.Count)
			if len(f.Matches) > 0 {
				dst = append(dst, `,"matches":[`...)
				for j, m := range f.Matches {
					if j > 0 {
						dst = append(dst, ',')
					}
					dst = appendInt(append(dst, `{"line":`...), m.Line)
					dst, ok = appendMember(dst, "text", m.Text, ok, html)
					if len(m.Ranges) > 0 {
						dst = append(dst, `,"ranges":[`...)
						for k, r := range m.Ranges {
							if k > 0 {
								dst = append(dst, ',')
							}
							dst = appendInt(append(dst, '['), r[0])
							dst = appendInt(append(dst, ','), r[1])
							dst = append(dst, ']')
						}
						dst = append(dst, ']')
					}
					dst = append(dst, '}')
				}
				dst = append(dst, ']')
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(c.Paths) > 0 {
		dst = append(dst, `,"paths":[`...)
		for i, p := range c.Paths {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, ok = appendString(dst, p, ok, html)
		}
		dst = append(dst, ']')
	}
	dst = appendInt(append(dst, `,"total":`...), c.Total)
	if c.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	return append(dst, '}'), ok
}

// sizeHint is about the length of the encoding (a little more when text has
// escapes), so that it is written into one allocation.
func (c *ReadResult) sizeHint() int {
	n := 128 + len(c.Title) + len(c.Path) + len(c.Lang)
	for _, l := range c.Lines {
		n += 32 + len(l.Text)
	}
	for _, b := range c.Content {
		n += 64 + len(b.Text) + len(b.Data) + len(b.URI)
	}
	return n + n/16
}

func (c *SearchResult) sizeHint() int {
	n := 128 + len(c.Title) + len(c.Query) + len(c.Dir)
	for _, f := range c.Files {
		n += 32 + len(f.Path)
		for _, m := range f.Matches {
			n += 32 + len(m.Text) + 16*len(m.Ranges)
		}
	}
	for _, p := range c.Paths {
		n += 4 + len(p)
	}
	return n + n/16
}

func appendInt(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(i), 10) }

// appendMember appends ,"name":"v" (name needs no escaping).
func appendMember(dst []byte, name, v string, ok, html bool) ([]byte, bool) {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendString(dst, v, ok, html)
}

// appendString quotes s as the v2 encoder does by default: only '"', '\\' and
// control characters escaped, the short forms where JSON has them; with html,
// <, >, &, U+2028 and U+2029 too, as \u escapes (encoding/json's HTMLEscape).
// ok turns false for invalid UTF-8.
func appendString(dst []byte, s string, ok, html bool) ([]byte, bool) {
	stop := &stringStop
	if html {
		stop = &htmlStop
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		i = jsonfast.PlainWords(s, i, html)
		for i < len(s) && !stop[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c == lineSepLead {
			// U+2028 and U+2029 are E2 80 A8 and E2 80 A9; other runes
			// starting with E2 stay as they are.
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[s[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default: // other control characters, and <, > and & with html
			dst = append(dst, `\u00`...)
			dst = append(dst, hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), ok && utf8.ValidString(s)
}

// lineSepLead is the first byte of U+2028 and U+2029.
const lineSepLead = 0xE2

const hexDigits = "0123456789abcdef"

// stringStop holds the bytes appendString escapes; the others it copies in
// runs (bytes that are not ASCII are checked once for the whole string).
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// htmlStop is stringStop with what HTMLEscape escapes besides.
var htmlStop = func() (t [256]bool) {
	t = stringStop
	t['<'], t['>'], t['&'], t[lineSepLead] = true, true, true, true
	return t
}()
