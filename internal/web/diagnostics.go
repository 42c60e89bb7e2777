package web

import (
	"strconv"

	"github.com/dsh-dev/dsh/internal/card"
)

// diagnostics is a diff result's diagnostics section: what the language
// server reported in the changed file after the change, one line a problem.
func (o out) diagnostics(ds []card.Diagnostic) {
	if len(ds) == 0 {
		return
	}
	o.raw("<ul class=\"diagnostics\">")
	for _, d := range ds {
		o.raw("<li class=\"")
		o.esc(string(d.Severity))
		o.raw("\"><span class=\"at\">")
		o.esc(d.Path + ":" + strconv.Itoa(d.Line) + ":" + strconv.Itoa(d.Column))
		o.raw("</span> <span class=\"severity\">")
		o.esc(string(d.Severity))
		o.raw("</span> <span class=\"message\">")
		o.esc(d.Message)
		o.raw("</span>")
		if d.Source != "" {
			o.raw(" <span class=\"source\">")
			o.esc(d.Source)
			o.raw("</span>")
		}
		o.raw("</li>")
	}
	o.raw("</ul>")
}
