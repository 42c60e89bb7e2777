package search

import (
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The presenters are pure: the call card knows the arguments, the result card
// the meta (nil when it is missing or invalid: the consumer shows the raw text).

func searchCall(title, p string) card.Call {
	c := &card.GenericCall{Title: title}
	if p != "" {
		c.Locations = []card.Location{{Path: p}}
	}
	return c
}

func presentGrepCall(p GrepParams, _ *Meta) card.Call {
	title := "Grep " + strconv.Quote(p.Pattern)
	if p.Path != "" {
		title += " in " + p.Path
	}
	var opts []string
	if p.Glob != "" {
		opts = append(opts, p.Glob)
	}
	if p.Type != "" {
		opts = append(opts, "type "+p.Type)
	}
	if p.IgnoreCase {
		opts = append(opts, "ignoring case")
	}
	if p.Output != "" && p.Output != outContent {
		opts = append(opts, p.Output)
	}
	if len(opts) > 0 {
		title += " (" + strings.Join(opts, ", ") + ")"
	}
	return searchCall(title, p.Path)
}

func presentGlobCall(p GlobParams, _ *Meta) card.Call {
	title := "Glob " + p.Pattern
	if p.Path != "" {
		title += " in " + p.Path
	}
	return searchCall(title, p.Path)
}

func presentLSCall(p LSParams, _ *Meta) card.Call {
	return searchCall("List "+cmpOr(p.Path, "."), p.Path)
}

// searchResult is the card of a well-formed result, or nil.
func searchResult(r tool.Result, m *Meta, title string) card.Result {
	if m == nil || r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
		return nil
	}
	return m.card(title)
}

func presentGrepResult(p GrepParams, r tool.Result, m *Meta) card.Result {
	if m == nil {
		return nil
	}
	var title string
	switch {
	case m.Total == 0:
		title = "No matches"
	case p.Output == outFiles:
		title = plural(m.Total, "file")
	default:
		title = plural(m.Total, "matching line")
		if m.Files != nil && !m.Truncated {
			title += " in " + plural(len(m.Files), "file")
		}
	}
	return searchResult(r, m, title)
}

func presentGlobResult(_ GlobParams, r tool.Result, m *Meta) card.Result {
	if m == nil {
		return nil
	}
	return searchResult(r, m, plural(m.Total, "file"))
}

func presentLSResult(_ LSParams, r tool.Result, m *Meta) card.Result {
	if m == nil {
		return nil
	}
	return searchResult(r, m, plural(m.Total, "entry"))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
