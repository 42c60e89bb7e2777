package acp

import (
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
)

// diagnosticsText is a diff result's diagnostics as the text block that
// follows its diffs: what the language server reported after the change.
func diagnosticsText(ds []card.Diagnostic) string {
	var b strings.Builder
	b.WriteString("Diagnostics after the change:")
	for _, d := range ds {
		b.WriteString("\n- `" + d.Path + ":" + strconv.Itoa(d.Line) + ":" + strconv.Itoa(d.Column) + "` " +
			string(d.Severity) + ": " + d.Message)
		if d.Source != "" {
			b.WriteString(" (" + d.Source + ")")
		}
	}
	return b.String()
}
