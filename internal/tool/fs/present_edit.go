package fs

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// editPresentCall shows the replacement in place: the hunks the preview found it
// would apply, context and line numbers included, or a file to create whole.
// Without a preview that fits the call (a log older than previews) it shows the
// replacement as proposed, oldText null when old_string is empty.
func editPresentCall(p editParams, pv *diffMeta) card.Call {
	if !editFits(p, pv) {
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
	if pv.Created {
		return hunkCreatedCall("Create "+p.Path, p.Path, p.NewString)
	}
	return hunkCall(hunkCard("Edit "+p.Path, p.Path, pv.Hunks, hunkOmittedNote(pv.Omitted, len(pv.Hunks), "site")))
}

// editPresentResult shows the hunks an edit applied, or a created file whole. It
// returns nil for an error result and for meta that is missing, malformed or does
// not fit the arguments.
func editPresentResult(p editParams, r tool.Result, m *diffMeta) card.Result {
	if r.IsError || !editFits(p, m) {
		return nil
	}
	c := hunkCard("Edit "+p.Path, p.Path, m.Hunks, hunkOmittedNote(m.Omitted, len(m.Hunks), "site"))
	if m.Created {
		c = hunkCreatedCard("Create "+p.Path, p.Path, p.NewString)
	}
	c.Diagnostics = m.Diagnostics
	return c
}

// editFits reports whether valid meta is edit's meta for this call: no
// "unchanged", a creation only for an empty old_string, and as many sites as
// replace_all allows, none of them lost.
func editFits(p editParams, m *diffMeta) bool {
	switch {
	case m == nil || m.Path != p.Path || m.Unchanged:
		return false
	case m.Created:
		return p.OldString == "" && m.Sites == 0
	}
	return m.Sites >= 1 && (p.ReplaceAll || m.Sites == 1) && len(m.Hunks) <= m.Sites && m.Omitted <= m.Sites
}
