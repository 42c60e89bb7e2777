package termui

import (
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
)

const sgrYellow = "33"

// diagnosticRows are a diff result's diagnostics section: one row per problem
// the language server reported, "path:line:col severity: message [source]",
// its first line only (the model's text has the rest).
func (r *Renderer) diagnosticRows(ds []card.Diagnostic) []row {
	rows := make([]row, 0, len(ds))
	for _, d := range ds {
		sgr := sgrDim
		switch d.Severity {
		case card.SeverityError:
			sgr = sgrRed
		case card.SeverityWarning:
			sgr = sgrYellow
		case card.SeverityInfo, card.SeverityHint:
		}
		msg, _, _ := strings.Cut(d.Message, "\n")
		body := []span{{sgrDim, d.Path + ":" + strconv.Itoa(d.Line) + ":" + strconv.Itoa(d.Column) + " "},
			{sgr, string(d.Severity) + ": "}, {"", msg}}
		if d.Source != "" {
			body = append(body, span{sgrDim, " [" + d.Source + "]"})
		}
		rows = append(rows, row{prefix: indented, body: body})
	}
	return rows
}
