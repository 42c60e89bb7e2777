package termui

import (
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// More SGR parameters, used by Markdown only.
const (
	sgrEmph   = "3"
	sgrStrike = "9"
	sgrLink   = "4;36"
)

// mdParser parses CommonMark with GitHub's extensions. Only the AST is used:
// termui draws it itself, so raw HTML is shown as the text it is and every
// character goes through clean like any other untrusted text.
var mdParser = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.TaskList, extension.Table))
})

// Markdown renders the model's Markdown: headings bold, emphasis, inline code and
// links styled, code blocks highlighted, lists, quotes and tables laid out, every
// line wrapped to the width.
func (r *Renderer) Markdown(src string) error {
	rows := r.markdownRows(src)
	if len(rows) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.block(rows)
}

func (r *Renderer) markdownRows(src string) []row {
	b := []byte(src)
	doc := mdParser().Parser().Parse(text.NewReader(b))
	m := mdWalker{r: r, src: b}
	m.blocks(doc, nil, nil)
	return m.rows
}

// mdWalker collects the rows of a Markdown document.
type mdWalker struct {
	r    *Renderer
	src  []byte
	rows []row
}

// blank separates two blocks by an empty line carrying the container's prefix.
func (m *mdWalker) blank(prefix []span) {
	if len(m.rows) > 0 {
		m.rows = append(m.rows, row{prefix: trimRight(prefix)})
	}
}

func trimRight(p []span) []span {
	out := make([]span, len(p))
	for i, s := range p {
		out[i] = span{s.sgr, strings.TrimRight(s.text, " ")}
	}
	return out
}

// blocks draws the children of n; first is the prefix of the first line (a list
// marker), rest that of the others.
func (m *mdWalker) blocks(n ast.Node, first, rest []span) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c != n.FirstChild() || n.Kind() == ast.KindDocument {
			m.blank(rest)
		}
		m.block(c, first, rest)
		first = rest
	}
}

func (m *mdWalker) block(n ast.Node, first, rest []span) {
	switch n := n.(type) {
	case *ast.Heading:
		// Bold, without the #s, which are Markdown's syntax, not the text.
		m.para(m.inline(n, sgrBold), first, rest)
	case *ast.Paragraph, *ast.TextBlock:
		m.para(m.inline(n, ""), first, rest)
	case *ast.ThematicBreak:
		w := max(m.r.width-spansWidth(first), 3)
		m.rows = append(m.rows, row{prefix: append(first, span{sgrDim, strings.Repeat("─", min(w, 40))})})
	case *ast.FencedCodeBlock:
		m.code(string(n.Language(m.src)), n.Lines(), first, rest)
	case *ast.CodeBlock:
		m.code("", n.Lines(), first, rest)
	case *ast.Blockquote:
		q := span{sgrDim, "│ "}
		m.blocks(n, append(clone(first), q), append(clone(rest), q))
	case *ast.List:
		num := n.Start
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			if it != n.FirstChild() && !n.IsTight {
				m.blank(rest)
			}
			mark := "• "
			if n.IsOrdered() {
				mark = strconv.Itoa(num) + ". "
				num++
			}
			pad := span{"", strings.Repeat(" ", width(mark))}
			f, r := append(clone(first), span{sgrDim, mark}), append(clone(rest), pad)
			m.listItem(it, n.IsTight, f, r)
			first = rest
		}
	case *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := range lines.Len() {
			s := lines.At(i)
			b.Write(s.Value(m.src))
		}
		m.verbatim(b.String(), sgrDim, first, rest)
	case *east.Table:
		m.table(n, first, rest)
	default:
		if n.HasChildren() {
			m.blocks(n, first, rest)
		}
	}
}

// listItem draws an item's blocks; a tight list's paragraphs have no blank lines.
func (m *mdWalker) listItem(it ast.Node, tight bool, first, rest []span) {
	for c := it.FirstChild(); c != nil; c = c.NextSibling() {
		if c != it.FirstChild() && !tight {
			m.blank(rest)
		}
		m.block(c, first, rest)
		first = rest
	}
}

func clone(p []span) []span { return append([]span(nil), p...) }

func spansWidth(p []span) int {
	w := 0
	for _, s := range p {
		w += width(s.text)
	}
	return w
}

// para wraps styled text at spaces into rows.
func (m *mdWalker) para(sp []span, first, rest []span) {
	w := max(m.r.width-spansWidth(rest), 1)
	for i, line := range wrapSpans(sp, w) {
		p := rest
		if i == 0 {
			p = first
		}
		m.rows = append(m.rows, row{prefix: p, body: line})
	}
}

// verbatim draws text line by line; put wraps lines that do not fit.
func (m *mdWalker) verbatim(s, sgr string, first, rest []span) {
	for i, l := range splitLines(s) {
		p := rest
		if i == 0 {
			p = first
		}
		m.rows = append(m.rows, textRow(p, sgr, l))
	}
}

func (m *mdWalker) code(lang string, lines *text.Segments, first, rest []span) {
	src := make([]string, lines.Len())
	for i := range src {
		s := lines.At(i)
		src[i], _ = clean(strings.TrimRight(string(s.Value(m.src)), "\r\n"), 0)
	}
	var colored [][]span
	if m.r.color && lang != "" {
		colored = highlight(lang, src)
	}
	bar := span{sgrDim, "▎ "}
	for i, l := range src {
		p := append(clone(rest), bar)
		if i == 0 {
			p = append(clone(first), bar)
		}
		if colored != nil {
			m.rows = append(m.rows, row{prefix: p, body: colored[i]})
		} else {
			m.rows = append(m.rows, textRow(p, "", l))
		}
	}
}

// table draws a GitHub table with cells padded to their column's width; rows that
// are too wide for the terminal wrap like any other.
func (m *mdWalker) table(t *east.Table, first, rest []span) {
	var cells [][]string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var line []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			line = append(line, plainText(m.inline(c, "")))
		}
		cells = append(cells, line)
	}
	var widths []int
	for _, line := range cells {
		for i, c := range line {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], width(c))
		}
	}
	for ri, line := range cells {
		var body []span
		for i, c := range line {
			if i > 0 {
				body = append(body, span{sgrDim, " │ "})
			}
			sgr := ""
			if ri == 0 {
				sgr = sgrBold
			}
			if i < len(line)-1 {
				c += strings.Repeat(" ", widths[i]-width(c))
			}
			body = append(body, span{sgr, c})
		}
		p := rest
		if ri == 0 {
			p = first
		}
		m.rows = append(m.rows, row{prefix: p, body: body})
		if ri == 0 {
			var sep []string
			for _, w := range widths {
				sep = append(sep, strings.Repeat("─", w))
			}
			m.rows = append(m.rows, textRow(rest, sgrDim, strings.Join(sep, "─┼─")))
		}
	}
}

func plainText(sp []span) string {
	var b strings.Builder
	for _, s := range sp {
		b.WriteString(s.text)
	}
	return b.String()
}

// inline flattens n's inline children into styled spans, cleaned.
func (m *mdWalker) inline(n ast.Node, sgr string) []span {
	var out []span
	add := func(sgr, s string) {
		s, _ = clean(s, 0)
		out = append(out, span{sgr, s})
	}
	var walk func(n ast.Node, sgr string)
	walk = func(n ast.Node, sgr string) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				add(sgr, string(c.Segment.Value(m.src)))
				if c.HardLineBreak() {
					out = append(out, span{"", "\n"})
				} else if c.SoftLineBreak() {
					add(sgr, " ")
				}
			case *ast.String:
				add(sgr, string(c.Value))
			case *ast.CodeSpan:
				var b strings.Builder
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if tx, ok := t.(*ast.Text); ok {
						b.Write(tx.Segment.Value(m.src))
					}
				}
				add(join(sgr, sgrCyan), b.String())
			case *ast.Emphasis:
				st := sgrEmph
				if c.Level >= 2 {
					st = sgrBold
				}
				walk(c, join(sgr, st))
			case *east.Strikethrough:
				walk(c, join(sgr, sgrStrike))
			case *ast.Link:
				before := len(out)
				walk(c, join(sgr, sgrLink))
				if dest := string(c.Destination); dest != "" && dest != plainText(out[before:]) {
					add(sgrDim, " ("+dest+")")
				}
			case *ast.AutoLink:
				add(join(sgr, sgrLink), string(c.URL(m.src)))
			case *ast.Image:
				add(sgrDim, "[image: "+plainText(m.inline(c, ""))+"] ("+string(c.Destination)+")")
			case *ast.RawHTML:
				segs := c.Segments
				for i := range segs.Len() {
					s := segs.At(i)
					add(sgr, string(s.Value(m.src)))
				}
			case *east.TaskCheckBox:
				if c.IsChecked {
					add(sgrDim, "[x] ")
				} else {
					add(sgrDim, "[ ] ")
				}
			default:
				walk(c, sgr)
			}
		}
	}
	walk(n, sgr)
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ";" + b
}

// wrapSpans breaks styled text at spaces (and at "\n" spans) into lines of at most
// w columns; a word wider than w is left whole for put to break.
func wrapSpans(sp []span, w int) [][]span {
	type word struct {
		parts []span
		w     int
	}
	var lines [][]span
	var cur []span
	curW := 0
	var pending word // the word being read
	spaceBefore := false
	flushWord := func() {
		if len(pending.parts) == 0 {
			return
		}
		if curW > 0 && curW+1+pending.w > w {
			lines = append(lines, cur)
			cur, curW = nil, 0
		} else if curW > 0 && spaceBefore {
			cur = append(cur, span{"", " "})
			curW++
		}
		cur = append(cur, pending.parts...)
		curW += pending.w
		pending = word{}
		spaceBefore = false
	}
	for _, s := range sp {
		if s.text == "\n" && s.sgr == "" {
			flushWord()
			lines = append(lines, cur)
			cur, curW = nil, 0
			continue
		}
		t := s.text
		for t != "" {
			i := strings.IndexByte(t, ' ')
			if i < 0 {
				pending.parts = append(pending.parts, span{s.sgr, t})
				pending.w += width(t)
				break
			}
			if i > 0 {
				pending.parts = append(pending.parts, span{s.sgr, t[:i]})
				pending.w += width(t[:i])
			}
			if len(pending.parts) > 0 {
				flushWord()
			}
			spaceBefore = true
			t = t[i+1:]
		}
	}
	flushWord()
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}
