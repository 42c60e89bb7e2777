package fs

import (
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
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

// diffMeta is what write and edit persist in a result's meta: everything their pure
// presenters need besides the arguments. A created file's text is in the arguments,
// so its meta carries no hunks.
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
}

// hunkMetaFromMeta narrows persisted meta defensively and totally: anything that is
// not well-formed write/edit meta for path gives false, never a panic. Beyond the
// types it checks what well-typed JSON can still get wrong: 1-based integral starts,
// non-negative integral counts that agree with the texts, hunks in file order that
// do not overlap, and flags that agree with each other.
func hunkMetaFromMeta(raw []byte, path string) (diffMeta, bool) {
	var no diffMeta
	obj, ok := metaObject(raw)
	if !ok {
		return no, false
	}
	var m diffMeta
	if m.Path, ok = obj["path"].(string); !ok || m.Path == "" || m.Path != path {
		return no, false
	}
	if m.Created, ok = obj["created"].(bool); !ok {
		return no, false
	}
	if u, present := obj["unchanged"]; present {
		if m.Unchanged, ok = u.(bool); !ok {
			return no, false
		}
	}
	if m.Sites, ok = hunkOptionalCount(obj, "sites"); !ok {
		return no, false
	}
	if m.Omitted, ok = hunkOptionalCount(obj, "omitted"); !ok {
		return no, false
	}
	items, ok := obj["hunks"].([]any)
	if !ok {
		return no, false
	}
	m.Hunks = make([]diffHunk, 0, len(items))
	oldEnd, newEnd := 1, 1
	for _, it := range items {
		h, ok := hunkFromAny(it)
		if !ok || h.OldStart < oldEnd || h.NewStart < newEnd {
			return no, false
		}
		oldEnd, newEnd = h.OldStart+h.OldLines, h.NewStart+h.NewLines
		m.Hunks = append(m.Hunks, h)
	}
	switch {
	case m.Created && m.Unchanged,
		(m.Created || m.Unchanged) && (len(m.Hunks) > 0 || m.Omitted > 0),
		!m.Created && !m.Unchanged && len(m.Hunks) == 0 && m.Omitted == 0:
		return no, false
	}
	return m, true
}

func hunkFromAny(v any) (diffHunk, bool) {
	var no, h diffHunk
	obj, ok := v.(map[string]any)
	if !ok {
		return no, false
	}
	if h.OldStart, ok = metaInt(obj["oldStart"], 1); !ok {
		return no, false
	}
	if h.NewStart, ok = metaInt(obj["newStart"], 1); !ok {
		return no, false
	}
	if h.OldLines, ok = metaInt(obj["oldLines"], 0); !ok {
		return no, false
	}
	if h.NewLines, ok = metaInt(obj["newLines"], 0); !ok {
		return no, false
	}
	if h.OldText, ok = obj["oldText"].(string); !ok {
		return no, false
	}
	if h.NewText, ok = obj["newText"].(string); !ok {
		return no, false
	}
	if h.OldLines+h.NewLines == 0 ||
		hunkCountLines(h.OldText) != h.OldLines || hunkCountLines(h.NewText) != h.NewLines {
		return no, false
	}
	return h, true
}

// hunkOptionalCount reads a non-negative integer member that defaults to zero.
func hunkOptionalCount(obj map[string]any, name string) (int, bool) {
	v, present := obj[name]
	if !present {
		return 0, true
	}
	return metaInt(v, 0)
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
