package fs

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// writePresentCall shows what the write will do to the file as its preview found
// it: a creation whole, an overwrite as the hunks it changes (with their real
// old text and line numbers). Without a preview that fits the call (a log older
// than previews) it shows the proposed content as a new text, knowing nothing of
// what the file holds.
func writePresentCall(p writeParams, pv *diffMeta) card.Call {
	if !writeFits(p, pv) {
		return &card.DiffCall{
			Title:     "Write " + p.Path,
			Diffs:     []card.FileDiff{{Path: p.Path, NewText: p.Content}},
			Locations: []card.Location{{Path: p.Path}},
		}
	}
	switch {
	case pv.Created:
		return hunkCreatedCall("Create "+p.Path, p.Path, p.Content)
	case pv.Unchanged:
		return &card.DiffCall{Title: "Write " + p.Path + " (no changes)", Diffs: []card.FileDiff{},
			Locations: []card.Location{{Path: p.Path}}}
	}
	return hunkCall(hunkCard("Write "+p.Path, p.Path, pv.Hunks, hunkOmittedNote(pv.Omitted, len(pv.Hunks), "hunk")))
}

// writePresentResult shows a created file whole, an overwrite as the hunks it
// changed, and an identical write as a plain "no changes". It returns nil for an
// error result and for meta that is missing, malformed or not write's.
func writePresentResult(p writeParams, r tool.Result, m *diffMeta) card.Result {
	if r.IsError || !writeFits(p, m) {
		return nil
	}
	var c *card.DiffResult
	switch {
	case m.Created:
		c = hunkCreatedCard("Create "+p.Path, p.Path, p.Content)
	case m.Unchanged:
		return &card.GenericResult{Title: "No changes: " + p.Path, Content: []card.Content{card.Text(writeNoChange(p.Path))}}
	default:
		c = hunkCard("Write "+p.Path, p.Path, m.Hunks, hunkOmittedNote(m.Omitted, len(m.Hunks), "hunk"))
	}
	c.Diagnostics = m.Diagnostics
	return c
}

// writeFits reports whether valid meta is write's meta for this call.
func writeFits(p writeParams, m *diffMeta) bool {
	return m != nil && m.Path == p.Path && m.Sites == 0
}

func writeNoChange(path string) string {
	return "No changes: " + path + " already has this content."
}
