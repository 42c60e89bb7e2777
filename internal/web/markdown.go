package web

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// md renders CommonMark with GitHub's extensions. Raw HTML in a message is never
// passed through: it is shown as the text it is ("use <div> here" keeps its
// words), where goldmark's safe default would silently drop it.
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100))),
	)
})

// sanitizer is the second line of defence: whatever the renderer emits is reduced
// to user-content HTML, links to http, https, mailto and relative URLs only (no
// javascript:), with rel="nofollow noreferrer noopener" on links.
var sanitizer = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// markdown renders a message's Markdown as sanitised HTML.
func markdown(src string) template.HTML {
	var b bytes.Buffer
	if err := md().Convert([]byte(src), &b); err != nil {
		// goldmark does not fail on any input; if it ever did, show the text.
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>") // #nosec: escaped
	}
	return template.HTML(sanitizer().SanitizeBytes(b.Bytes())) // #nosec: sanitised
}

// rawHTMLAsText renders inline and block raw HTML escaped, as text.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := range segs.Len() {
				seg := segs.At(i)
				template.HTMLEscape(w, seg.Value(src))
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
			template.HTMLEscape(w, seg.Value(src))
		}
		if b := n.(*ast.HTMLBlock); b.HasClosure() {
			template.HTMLEscape(w, b.ClosureLine.Value(src))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkSkipChildren, nil
	})
}
