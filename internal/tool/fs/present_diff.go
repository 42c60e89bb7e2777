package fs

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// diffHunk is one contextual hunk of an applied change. OldText and NewText are the
// hunk's lines on each side, context included, byte for byte (line endings too), so
// that replacing OldLines lines at OldStart of the old file by NewText yields the new
// file. Starts are 1-based; a side with no lines starts where its lines would be.
type diffHunk struct {
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	OldText  string `json:"oldText"`
	NewText  string `json:"newText"`
}

// diffMeta is what write and edit persist, both as the preview logged with the
// call (what the change would do to the file as it is) and in the result's meta
// (what it did): everything their pure presenters need besides the arguments. A
// created file's text is in the arguments, so its meta carries no hunks.
type diffMeta struct {
	Path    string `json:"path"` // as the model gave it
	Created bool   `json:"created"`
	// Unchanged: write found the file already holding the content.
	Unchanged bool `json:"unchanged,omitzero"`
	// Sites: the number of places edit replaced.
	Sites int        `json:"sites,omitzero"`
	Hunks []diffHunk `json:"hunks"`
	// Omitted counts what the hunk budget left out: sites for edit, hunks for write.
	Omitted int `json:"omitted,omitzero"`
	// Stamp is the file as a preview found it (absent: the file did not exist)
	// or, in a result, as the change left it. Logs older than stamps have none.
	Stamp *fileStamp `json:"stamp,omitzero"`
	// Editor: the change was applied through the editor, not written to disk.
	Editor bool `json:"editor,omitzero"`
	// Diagnostics are the errors and warnings the file's language server
	// reported after the change (results only; absent when none checked it);
	// DiagnosticsMore counts those beyond the bound.
	Diagnostics     []card.Diagnostic `json:"diagnostics,omitempty"`
	DiagnosticsMore int               `json:"diagnosticsMore,omitzero"`
}

// MarshalJSON writes meta for the log. Files need not be UTF-8 but JSON strings
// must be: invalid bytes in hunk texts become U+FFFD, which changes no line count.
func (m *diffMeta) MarshalJSON() ([]byte, error) {
	type plain diffMeta
	return json.Marshal((*plain)(m), json.Deterministic(true), jsontext.AllowInvalidUTF8(true))
}

// UnmarshalJSON refuses missing required members and nulls (see metaMembers).
func (m *diffMeta) UnmarshalJSON(b []byte) error {
	type plain diffMeta
	return metaUnmarshal(b, reflect.TypeFor[plain](), (*plain)(m))
}

// DecodeFast is UnmarshalJSON for the plainest input, without reflection.
func (m *diffMeta) DecodeFast(d *jsonfast.Reader) bool {
	type plain diffMeta
	return jsonfast.DecodeValue(d, (*plain)(m))
}

// Validate checks what well-typed JSON can still get wrong: 1-based starts,
// non-negative counts that agree with the texts, hunks in file order that do not
// overlap, and flags that agree with each other. Whether the meta belongs to the
// call (its path, its sites) is the presenter's to judge.
func (m *diffMeta) Validate() error {
	if m.Path == "" {
		return errors.New("empty path")
	}
	if err := metaCount("sites", m.Sites, 0); err != nil {
		return err
	}
	if err := metaCount("omitted", m.Omitted, 0); err != nil {
		return err
	}
	if m.Hunks == nil {
		return errors.New("no hunks")
	}
	oldEnd, newEnd := 1, 1
	for _, h := range m.Hunks {
		if err := h.validate(); err != nil {
			return err
		}
		if h.OldStart < oldEnd || h.NewStart < newEnd {
			return errors.New("hunks out of order or overlapping")
		}
		oldEnd, newEnd = h.OldStart+h.OldLines, h.NewStart+h.NewLines
	}
	switch {
	case m.Created && m.Unchanged,
		(m.Created || m.Unchanged) && (len(m.Hunks) > 0 || m.Omitted > 0),
		!m.Created && !m.Unchanged && len(m.Hunks) == 0 && m.Omitted == 0:
		return errors.New("flags disagree with the hunks")
	}
	if err := metaCount("diagnosticsMore", m.DiagnosticsMore, 0); err != nil {
		return err
	}
	for _, d := range m.Diagnostics {
		switch d.Severity {
		case card.SeverityError, card.SeverityWarning, card.SeverityInfo, card.SeverityHint:
		default:
			return fmt.Errorf("diagnostic severity %q", d.Severity)
		}
		if d.Path != m.Path || metaCount("line", d.Line, 1) != nil || metaCount("column", d.Column, 1) != nil {
			return errors.New("diagnostic of another file or at no position")
		}
	}
	if m.Stamp != nil {
		return m.Stamp.Validate()
	}
	return nil
}

func (h diffHunk) validate() error {
	for _, c := range []struct {
		name   string
		v, min int
	}{{"oldStart", h.OldStart, 1}, {"newStart", h.NewStart, 1}, {"oldLines", h.OldLines, 0}, {"newLines", h.NewLines, 0}} {
		if err := metaCount(c.name, c.v, c.min); err != nil {
			return err
		}
	}
	if h.OldLines+h.NewLines == 0 ||
		hunkCountLines(h.OldText) != h.OldLines || hunkCountLines(h.NewText) != h.NewLines {
		return errors.New("hunk line counts disagree with its texts")
	}
	return nil
}

// hunkCountLines counts the lines of s: its newlines, plus a last line without one.
func hunkCountLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// hunkCard shows applied hunks: one FileDiff per hunk with its starts, and a
// location at each hunk's first line in the new file. omittedNote says what the
// hunk budget left out.
func hunkCard(title, path string, hunks []diffHunk, omittedNote string) *card.DiffResult {
	c := &card.DiffResult{Title: title, Diffs: make([]card.FileDiff, 0, len(hunks))}
	for _, h := range hunks {
		c.Diffs = append(c.Diffs, card.FileDiff{
			Path:     path,
			OldText:  card.Ptr(h.OldText),
			NewText:  h.NewText,
			OldStart: h.OldStart,
			NewStart: h.NewStart,
		})
		c.Locations = append(c.Locations, card.Location{Path: path, Line: card.Ptr(h.NewStart)})
	}
	if omittedNote != "" {
		c.Title += " (" + omittedNote + ")"
	}
	return c
}

// hunkCall is the call card of a previewed change: the hunks it would apply.
func hunkCall(c *card.DiffResult) *card.DiffCall {
	return &card.DiffCall{Title: c.Title, Diffs: c.Diffs, Locations: c.Locations}
}

// hunkCreatedCall is the call card of a previewed creation: the file whole.
func hunkCreatedCall(title, path, content string) *card.DiffCall {
	return hunkCall(hunkCreatedCard(title, path, content))
}

// hunkCreatedCard shows a created file whole.
func hunkCreatedCard(title, path, content string) *card.DiffResult {
	return &card.DiffResult{
		Title:     title,
		Diffs:     []card.FileDiff{{Path: path, NewText: content, NewStart: 1}},
		Locations: []card.Location{{Path: path, Line: card.Ptr(1)}},
	}
}

// hunkOmittedNote phrases what the budget left out, e.g. "12 more sites not shown".
func hunkOmittedNote(omitted, shown int, unit string) string {
	if omitted == 0 {
		return ""
	}
	s := strconv.Itoa(omitted)
	if shown > 0 {
		s += " more"
	}
	s += " " + unit
	if omitted != 1 {
		s += "s"
	}
	return s + " not shown"
}
