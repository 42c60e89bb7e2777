package fs

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// writePresentCall shows the proposed content as a new text: the call knows
// nothing of what the file holds now.
func writePresentCall(p writeParams) card.Call {
	return &card.DiffCall{
		Title:     "Write " + p.Path,
		Diffs:     []card.FileDiff{{Path: p.Path, NewText: p.Content}},
		Locations: []card.Location{{Path: p.Path}},
	}
}

// writePresentResult shows a created file whole, an overwrite as the hunks it
// changed, and an identical write as a plain "no changes". It returns nil for an
// error result and for meta that is missing, malformed or not write's.
func writePresentResult(p writeParams, r tool.Result) card.Result {
	if r.IsError {
		return nil
	}
	m, ok := hunkMetaFromMeta(r.Meta, p.Path)
	if !ok || m.Sites != 0 {
		return nil
	}
	switch {
	case m.Created:
		return hunkCreatedCard("Create "+p.Path, p.Path, p.Content)
	case m.Unchanged:
		return &card.GenericResult{Title: "No changes: " + p.Path, Content: []card.Content{card.Text(writeNoChange(p.Path))}}
	}
	return hunkCard("Write "+p.Path, p.Path, m.Hunks, hunkOmittedNote(m.Omitted, len(m.Hunks), "hunk"))
}

func writeNoChange(path string) string {
	return "No changes: " + path + " already has this content."
}
