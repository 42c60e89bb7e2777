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
	cr      bool   // a "\r" waits to see whether "\n" follows
	partial []byte // an incomplete rune at the end of the last chunk
	shown   bool   // output was streamed since the last Call
	line    string // the open line's cleaned text from the start of its current row
	written int    // bytes of line already written
	rowOpen bool   // the open line's current row has been started
	lines   int    // lines of output streamed since the last Call
	folded  bool   // the head was shown; the rest waits for the result's tail
}

// Progress renders live output of a running command as it comes, indented and dim.
// A line that reaches the width goes on under itself. Like a result card, live
// output folds: past the card's head (FoldHead lines of a body longer than
// FoldAbove) nothing more is written, and the result shows the fold marker and
// the tail, so a command looks the same live as on replay.
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
	// The cleaned text put since s.line was last brought up to date: a long
	// line grown a rune at a time by string concatenation took quadratic time.
	var add []byte
	sync := func() {
		if len(add) > 0 {
			s.line += string(add)
			add = add[:0]
		}
	}
	endLine := func() {
		sync()
		r.emit(b, true)
		s.open, s.col = false, 0
		s.lines++
		if s.lines >= r.foldHead && !s.folded {
			s.folded = true
		}
	}
	put := func(text string) {
		s.open = true
		if s.folded {
			return
		}
		t, col := clean(text, s.col)
		add = append(add, t...)
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
	sync()
	r.emit(b, false)
}

// emit writes what is known of the open line: the rows whose break is settled
// (wrapPoints, like a result card's rows) and, of the rest, the words that are
// complete. eol ends the line.
func (r *Renderer) emit(b *strings.Builder, eol bool) {
	s := &r.live
	if s.folded {
		s.line, s.written, s.rowOpen = "", 0, false
		return
	}
	budget := max(r.width-len(indent), 1)
	p := painter{r: r, b: b}
	write := func(t string) {
		if t == "" {
			return
		}
		if !s.rowOpen {
			p.add(span{"", indent})
			s.rowOpen = true
		}
		p.add(span{sgrDim, t})
	}
	// The points are those wrapPoints finds again in what is left after each:
	// it breaks greedily from the start.
	off := 0
	for _, bp := range wrapPoints(s.line, budget) {
		write(s.line[off+s.written : bp.at])
		p.flush()
		b.WriteByte('\n')
		p.add(span{"", indent})
		off, s.written = bp.at+bp.skip, 0
	}
	s.line = s.line[off:]
	end := len(s.line)
	if !eol {
		end = max(strings.LastIndexByte(s.line, ' '), s.written)
	}
	write(s.line[s.written:end])
	s.written = end
	if eol {
		if !s.rowOpen {
			p.add(span{"", indent})
		}
		p.flush()
		b.WriteByte('\n')
		s.line, s.written, s.rowOpen = "", 0, false
		return
	}
	p.flush()
}
