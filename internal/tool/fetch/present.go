package fetch

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// presentCall is a generic card titled with the URL; the prompt, if any, is its body.
func presentCall(p Params, _ *Meta) card.Call {
	c := &card.GenericCall{Title: p.URL}
	if p.Prompt != "" {
		c.Content = []card.Content{card.Text(p.Prompt)}
	}
	return c
}

// presentResult is the page's text under its final URL. A failed fetch, or a
// result not shaped as Execute makes it (a header block, then the page), has
// no card: its raw content is shown.
func presentResult(p Params, r tool.Result, m *Meta) card.Result {
	if r.IsError || m == nil || len(r.Content) != 2 {
		return nil
	}
	return &card.GenericResult{Title: m.URL, Content: []card.Content{r.Content[1]}}
}
