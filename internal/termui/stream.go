package termui

import (
	"strings"
	"unicode/utf8"
)

// stream is the state of live output between chunks, which split lines, CRLF pairs
// and even runes anywhere.
type stream struct {
	open    bool   // a line is started
	col     int    // display column within the body of the open line
	cutOff  bool   // the open line hit the width; drop the rest of it
	cr      bool   // a "\r" waits to see whether "\n" follows
	partial []byte // an incomplete rune at the end of the last chunk
	shown   bool   // output was streamed since the last Call
}

// Progress renders live output of a running command as it comes, indented and dim.
// A line is cut one column before the width when it would not fit, since the rest of
// it is not known yet.
func (r *Renderer) Progress(chunk string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if chunk == "" {
		return nil
	}
	var b strings.Builder
	r.feed(&b, chunk, false)
	r.started = true
	r.live.shown = true
	return r.write(b.String())
}

// endStream finishes an open line of live output before anything else is written.
func (r *Renderer) endStream(b *strings.Builder) {
	r.feed(b, "", true)
}

// feed writes chunk; final flushes what waits and ends the open line.
func (r *Renderer) feed(b *strings.Builder, chunk string, final bool) {
	s := &r.live
	data := string(s.partial) + chunk
	s.partial = nil
	var run strings.Builder // body text of the open line, painted dim as one span
	flush := func() {
		p := painter{r: r, b: b}
		p.add(span{sgrDim, run.String()})
		p.flush()
		run.Reset()
	}
	endLine := func() {
		flush()
		b.WriteByte('\n')
		s.open, s.col, s.cutOff = false, 0, false
	}
	put := func(text string) {
		if !s.open {
			b.WriteString(indent)
			s.open = true
		}
		if s.cutOff {
			return
		}
		t, col := clean(text, s.col)
		if col > r.width-len(indent)-1 {
			run.WriteString(ellipsis)
			s.cutOff = true
			return
		}
		run.WriteString(t)
		s.col = col
	}
	for i := 0; i < len(data); {
		if !final && !utf8.FullRuneInString(data[i:]) {
			s.partial = []byte(data[i:])
			break
		}
		c, size := utf8.DecodeRuneInString(data[i:])
		text := data[i : i+size]
		i += size
		if s.cr {
			s.cr = false
			if c == '\n' {
				endLine()
				continue
			}
			put("\r")
		}
		switch c {
		case '\r':
			s.cr = true
		case '\n':
			endLine()
		default:
			put(text)
		}
	}
	if final {
		s.cr = false // a "\r" that ends the output ends its line
		if s.open {
			endLine()
		}
		return
	}
	flush()
}
