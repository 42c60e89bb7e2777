package fs

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// editPresentCall shows the replacement as proposed; oldText is null when
// old_string is empty (a file to create or fill).
func editPresentCall(p editParams) card.Call {
	var old *string
	if p.OldString != "" {
		old = card.Ptr(p.OldString)
	}
	return &card.DiffCall{
		Title:     "Edit " + p.Path,
		Diffs:     []card.FileDiff{{Path: p.Path, OldText: old, NewText: p.NewString}},
		Locations: []card.Location{{Path: p.Path}},
	}
}

// editPresentResult shows the hunks an edit applied, or a created file whole. It
// returns nil for an error result and for meta that is missing, malformed or does
// not fit the arguments.
func editPresentResult(p editParams, r tool.Result) card.Result {
	if r.IsError {
		return nil
	}
	m, ok := hunkMetaFromMeta(r.Meta, p.Path)
	if !ok || m.Unchanged {
		return nil
	}
	if m.Created {
		if p.OldString != "" || m.Sites != 0 {
			return nil
		}
		return hunkCreatedCard("Create "+p.Path, p.Path, p.NewString)
	}
	if m.Sites < 1 || !p.ReplaceAll && m.Sites != 1 || len(m.Hunks) > m.Sites || m.Omitted > m.Sites {
		return nil
	}
	return hunkCard("Edit "+p.Path, p.Path, m.Hunks, hunkOmittedNote(m.Omitted, len(m.Hunks), "site"))
}
