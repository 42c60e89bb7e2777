package web

import (
	"bytes"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"

	"github.com/dsh-dev/dsh/internal/card"
	hl "github.com/dsh-dev/dsh/internal/highlight"
)

// codeBody is a read window as highlighted HTML and its fold control.
type codeBody struct {
	Head safeHTML
	Fold *foldView
}

// code renders numbered lines with a line-number gutter and syntax highlighting.
// A folded window shows its head only: highlighting is the dearest part of a
// page, and the head is what a reader of a file looks at.
func (b *builder) code(callID, lang string, lines []card.ReadLine) codeBody {
	head, hidden := b.fold(len(lines))
	if hidden > 0 {
		hidden = len(lines) - head
	}
	headL, clipped := clipRead(lines[:head], b.full)
	cb := codeBody{Head: highlight(lang, headL)}
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
func highlight(lang string, lines []card.ReadLine) safeHTML {
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
		tokens, ok := hl.Tokens(lang, src.String())
		if !ok {
			tokens = []chroma.Token{{Type: chroma.Text, Value: src.String()}}
		}
		f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithLineNumbers(true),
			chromahtml.LineNumbersInTable(true), chromahtml.BaseLineNumber(run[0].Number), chromahtml.TabWidth(4))
		var one bytes.Buffer
		if err := f.Format(&one, codeStyle(), chroma.Literator(tokens...)); err != nil {
			// not expected from a formatter writing to a buffer; show the text escaped anyway
			one.Reset()
			one.WriteString("<pre>")
			htmlEscape(&one, []byte(src.String()))
			one.WriteString("</pre>")
		}
		out.Write(one.Bytes())
	}
	return safeHTML(out.String()) // #nosec: chroma escapes every token
}

// The highlighting palettes, light and dark (the page follows the browser's
// preference). They are built here rather than taken from chroma's styles
// package, whose init parses every bundled style and would cost each dsh
// start-up about 10 ms; and built on first use, as most runs serve no page.
var (
	codeStyle = sync.OnceValue(func() *chroma.Style {
		return chroma.MustNewStyle("dsh-light", chroma.StyleEntries{
			chroma.Background:          "#1f2328 bg:#f6f8fa",
			chroma.Keyword:             "#cf222e",
			chroma.KeywordConstant:     "#0550ae",
			chroma.KeywordType:         "#cf222e",
			chroma.NameBuiltin:         "#6639ba",
			chroma.NameFunction:        "#6639ba",
			chroma.NameClass:           "#953800",
			chroma.NameConstant:        "#0550ae",
			chroma.NameDecorator:       "#0550ae",
			chroma.NameTag:             "#116329",
			chroma.NameAttribute:       "#0550ae",
			chroma.NameVariable:        "#953800",
			chroma.LiteralString:       "#0a3069",
			chroma.LiteralStringEscape: "#0550ae",
			chroma.LiteralNumber:       "#0550ae",
			chroma.Comment:             "italic #57606a",
			chroma.CommentPreproc:      "bold #57606a",
			chroma.Operator:            "#cf222e",
			chroma.GenericDeleted:      "#82071e bg:#ffebe9",
			chroma.GenericInserted:     "#116329 bg:#dafbe1",
			chroma.GenericHeading:      "bold #0550ae",
			chroma.Error:               "#f6f8fa bg:#82071e",
		})
	})
	codeStyleDark = sync.OnceValue(func() *chroma.Style {
		return chroma.MustNewStyle("dsh-dark", chroma.StyleEntries{
			chroma.Background:          "#e6edf3 bg:#161b22",
			chroma.Keyword:             "#ff7b72",
			chroma.KeywordConstant:     "#79c0ff",
			chroma.KeywordType:         "#ff7b72",
			chroma.NameBuiltin:         "#d2a8ff",
			chroma.NameFunction:        "#d2a8ff",
			chroma.NameClass:           "#f0883e",
			chroma.NameConstant:        "#79c0ff",
			chroma.NameDecorator:       "#d2a8ff",
			chroma.NameTag:             "#7ee787",
			chroma.NameAttribute:       "#79c0ff",
			chroma.NameVariable:        "#ffa657",
			chroma.LiteralString:       "#a5d6ff",
			chroma.LiteralStringEscape: "#79c0ff",
			chroma.LiteralNumber:       "#79c0ff",
			chroma.Comment:             "italic #8b949e",
			chroma.CommentPreproc:      "bold #8b949e",
			chroma.Operator:            "#ff7b72",
			chroma.GenericDeleted:      "#ffa198 bg:#490202",
			chroma.GenericInserted:     "#56d364 bg:#0f5323",
			chroma.GenericHeading:      "bold #79c0ff",
			chroma.Error:               "#f0f6fc bg:#8e1519",
		})
	})
)

// chromaCSS is the stylesheet of the highlighting classes.
func chromaCSS() []byte {
	f := chromahtml.New(chromahtml.WithClasses(true), chromahtml.TabWidth(4))
	var b bytes.Buffer
	if err := f.WriteCSS(&b, codeStyle()); err != nil {
		panic(err) // writing to a buffer cannot fail
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	if err := f.WriteCSS(&b, codeStyleDark()); err != nil {
		panic(err)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
