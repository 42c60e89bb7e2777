package web

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"

	"github.com/dsh-dev/dsh/internal/card"
)

// codeBody is a read window as highlighted HTML, folded like a textBody.
type codeBody struct {
	Head, Tail template.HTML
	Fold       *foldView
}

// code renders numbered lines with a line-number gutter and syntax highlighting.
func (b *builder) code(callID, lang string, lines []card.ReadLine) codeBody {
	head, hidden := b.fold(len(lines))
	headL, clipped := clipRead(lines[:head], b.full)
	cb := codeBody{Head: highlight(lang, headL)}
	if hidden > 0 {
		tailL, c2 := clipRead(lines[head+hidden:], b.full)
		clipped = clipped || c2
		cb.Tail = highlight(lang, tailL)
	}
	if hidden > 0 || clipped {
		cb.Fold = &foldView{Hidden: hidden, Clipped: clipped, Src: b.src(callID)}
	}
	return cb
}

func clipRead(lines []card.ReadLine, full bool) ([]card.ReadLine, bool) {
	if full {
		return lines, false
	}
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.Text
	}
	cut, clipped := clipLines(texts)
	if !clipped {
		return lines, false
	}
	out := make([]card.ReadLine, len(lines))
	for i, l := range lines {
		out[i] = card.ReadLine{Number: l.Number, Text: cut[i]}
	}
	return out, true
}

// highlight formats lines with chroma's HTML formatter, which escapes every token
// and styles by class (the classes' colours are in /static/chroma.css, as the CSP
// forbids inline styles). Each run of consecutive line numbers gets a gutter
// starting at its first number. An unknown or empty lang is plain text.
func highlight(lang string, lines []card.ReadLine) template.HTML {
	var lexer chroma.Lexer
	if lang != "" {
		lexer = lexers.Get(lang)
	}
	if lexer == nil {
		lexer = lexers.Fallback
	}
	lexer = chroma.Coalesce(lexer)
	var out bytes.Buffer
	for len(lines) > 0 {
		n := 1
		for n < len(lines) && lines[n].Number == lines[n-1].Number+1 {
			n++
		}
		run := lines[:n]
		lines = lines[n:]
		var src strings.Builder
		for _, l := range run {
			src.WriteString(l.Text)
			src.WriteByte('\n')
		}
		f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(true),
			chromahtml.LineNumbersInTable(true), chromahtml.BaseLineNumber(run[0].Number), chromahtml.TabWidth(4))
		it, err := lexer.Tokenise(nil, src.String())
		if err != nil {
			it, err = lexers.Fallback.Tokenise(nil, src.String())
		}
		var one bytes.Buffer
		if err == nil {
			err = f.Format(&one, codeStyle, it)
		}
		if err != nil { // not expected from a plain-text lexer; show it escaped anyway
			one.Reset()
			one.WriteString("<pre>")
			template.HTMLEscape(&one, []byte(src.String()))
			one.WriteString("</pre>")
		}
		out.Write(one.Bytes())
	}
	return template.HTML(out.String()) // #nosec: chroma escapes every token
}

// The highlighting palettes: light, and dark when the browser prefers it.
var (
	codeStyle     = styles.Get("github")
	codeStyleDark = styles.Get("github-dark")
)

// chromaCSS is the stylesheet of the highlighting classes.
func chromaCSS() []byte {
	f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.TabWidth(4))
	var b bytes.Buffer
	if err := f.WriteCSS(&b, codeStyle); err != nil {
		panic(err) // writing to a buffer cannot fail
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	if err := f.WriteCSS(&b, codeStyleDark); err != nil {
		panic(err)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
