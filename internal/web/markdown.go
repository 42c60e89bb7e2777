package web

import (
	"bytes"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md renders CommonMark with GitHub's extensions, safely without a sanitiser:
// goldmark escapes all text and attribute values and, not being in unsafe mode,
// emits no raw HTML. On top of that, raw HTML in a message is shown as the text
// it is ("use <div> here" keeps its words), where goldmark would silently drop
// it; links and images keep only harmless URLs (linkPolicy); and table
// alignment is an align attribute, not an inline style the CSP would refuse.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(
			extension.Linkify,
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.TaskList,
		),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkPolicy{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))),
	)
})

// markdown renders a message's Markdown as safe HTML.
func markdown(src string) safeHTML {
	var b bytes.Buffer
	if err := md().Convert([]byte(src), &b); err != nil {
		// goldmark does not fail on any input; if it ever did, show the text.
		return safeHTML("<pre>" + htmlEscapeString(src) + "</pre>") // #nosec: escaped
	}
	return safeHTML(b.String()) // #nosec: goldmark escapes; raw HTML is text; URLs are vetted
}

// linkPolicy lets links go only to http, https, mailto and relative URLs, and
// images load only from http, https and relative ones (no javascript:, data: or
// anything else a browser might run). A link or image that may not stay is
// replaced by its text. Links get rel="nofollow noreferrer", and those leaving
// for the web noopener and target="_blank" too.
type linkPolicy struct{}

func (linkPolicy) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var nodes []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n.(type) {
		case *ast.Link, *ast.AutoLink, *ast.Image:
			if entering {
				nodes = append(nodes, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range nodes {
		switch n := n.(type) {
		case *ast.Link:
			if s := urlScheme(n.Destination); s == "" || s == "http" || s == "https" || s == "mailto" {
				linkAttrs(n, s)
			} else {
				unwrap(n)
			}
		case *ast.AutoLink:
			s := "mailto"
			if n.AutoLinkType == ast.AutoLinkURL {
				s = urlScheme(n.URL(src))
			}
			if s == "http" || s == "https" || s == "mailto" {
				linkAttrs(n, s)
			} else {
				n.Parent().ReplaceChild(n.Parent(), n, ast.NewString(n.Label(src)))
			}
		case *ast.Image:
			if s := urlScheme(n.Destination); s != "" && s != "http" && s != "https" {
				unwrap(n)
			}
		}
	}
}

func linkAttrs(n ast.Node, scheme string) {
	if scheme == "http" || scheme == "https" {
		n.SetAttributeString("rel", "nofollow noreferrer noopener")
		n.SetAttributeString("target", "_blank")
		return
	}
	n.SetAttributeString("rel", "nofollow noreferrer")
}

// unwrap replaces n by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; c = n.FirstChild() {
		parent.InsertBefore(parent, n, c)
	}
	parent.RemoveChild(parent, n)
}

// urlScheme is the scheme a browser finds in a Markdown URL, lower-cased, or ""
// for a relative URL. The URL is read as goldmark writes it, with backslash
// escapes and character references resolved; then, like a browser, surrounding
// blanks and controls and any tab or newline inside are ignored
// ("java&#x09;script:" is javascript:).
func urlScheme(dest []byte) string {
	dest = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest)))
	u := strings.TrimFunc(string(dest), func(r rune) bool { return r <= ' ' })
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	colon := strings.IndexByte(u, ':')
	if colon <= 0 {
		return ""
	}
	for i, c := range u[:colon] {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || (c < '0' || c > '9') && c != '+' && c != '-' && c != '.') {
			return "" // not a scheme, so a relative path such as "a/b:c"
		}
	}
	return strings.ToLower(u[:colon])
}

// rawHTMLAsText renders inline and block raw HTML escaped, as text.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				htmlEscape(w, seg.Value(src))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		_, _ = w.WriteString("<pre>")
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			htmlEscape(w, seg.Value(src))
		}
		if b := n.(*ast.HTMLBlock); b.HasClosure() {
			htmlEscape(w, b.ClosureLine.Value(src))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkSkipChildren, nil
	})
}
