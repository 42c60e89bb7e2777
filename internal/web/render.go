package web

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The page and the fragments the event stream sends are written by the render
// functions below, the same functions for both, so live equals reloaded. They are
// plain Go rather than html/template because executing any template makes the
// linker keep every exported method of every type in dsh (reflect's MethodByName
// becomes reachable): about 10 MiB of binary and 4 MiB of idle memory. What
// html/template did for the page is done here by hand, with the same output:
// every value is written through esc (its escaping of text and quoted
// attributes), every URL attribute through url (its scheme filter and
// normalisation), and only safeHTML — what goldmark and chroma made, which
// escape all they are given — is written as it is.

// safeHTML is HTML that is safe to write as it is.
type safeHTML string

// writer is where a page is rendered: a bytes.Buffer, or a bufio.Writer to the
// client, whose error is sticky, so that its Flush reports a failed write.
type writer interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
}

var (
	_ writer = (*bytes.Buffer)(nil)
	_ writer = (*bufio.Writer)(nil)
)

// out writes a page: literal markup as it is, values escaped.
type out struct{ w writer }

// raw writes markup of the page's own, or safeHTML.
func (o out) raw(s string) { _, _ = o.w.WriteString(s) }

// esc writes s escaped for text or a quoted attribute value, as html/template
// does: the five markup characters, '+' (so that no UTF-7 reading can find a
// tag) and NUL, which becomes U+FFFD.
func (o out) esc(s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		o.raw(s[last:i])
		o.raw(r)
		last = i + 1
	}
	o.raw(s[last:])
}

func (o out) int(n int64) { o.raw(strconv.FormatInt(n, 10)) }

// url writes the value of a URL attribute (href, src, data-src) that the value
// starts: one with a scheme other than http, https or mailto becomes
// "#ZgotmplZ", as html/template makes it. Every URL the server writes is its
// own path or a vetted image data: URL, so this is a second line of defence.
func (o out) url(u string) {
	if !safeURL(u) {
		u = "#ZgotmplZ"
	}
	o.urlPart(u)
}

// urlPart writes a part of a URL attribute after a literal start ("/s/…"):
// normalised (what is not allowed in a URL percent-encoded, valid escapes kept)
// and escaped.
func (o out) urlPart(u string) { o.esc(normalizeURL(u)) }

func safeURL(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	return !ok || strings.Contains(scheme, "/") ||
		strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "mailto")
}

// normalizeURL percent-encodes the bytes of u that are neither unreserved nor
// reserved in RFC 3986, as html/template's URL normaliser does (including its
// quirk of re-encoding a valid escape in the last two bytes).
func normalizeURL(u string) string {
	var b []byte
	last := 0
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case strings.IndexByte("!#$&*+,/:;=?@[]-._~", c) >= 0:
			continue
		case c == '%' && i+2 < len(u) && isHex(u[i+1]) && isHex(u[i+2]):
			continue
		}
		b = fmt.Appendf(append(b, u[last:i]...), "%%%02x", c)
		last = i + 1
	}
	if b == nil {
		return u
	}
	return string(append(b, u[last:]...))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// htmlEscape writes b escaped as text: the five markup characters, and NUL as
// U+FFFD. (It is text/template's HTMLEscape, which the Markdown renderer used.)
func htmlEscape(w io.Writer, b []byte) {
	last := 0
	for i, c := range b {
		var r string
		switch c {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '\'':
			r = "&#39;"
		case '&':
			r = "&amp;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		_, _ = w.Write(b[last:i])
		_, _ = io.WriteString(w, r)
		last = i + 1
	}
	_, _ = w.Write(b[last:])
}

func htmlEscapeString(s string) string {
	var b bytes.Buffer
	htmlEscape(&b, []byte(s))
	return b.String()
}
