package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// webSearch is the tool name of a provider's server-side web search, as the
// permission rules (WebSearch) and the cards name it.
const webSearch = "web_search"

// offerSearch says whether the turn offers the provider's web search. The
// provider runs it while it answers, so nobody can be asked in between: it is
// offered in every mode (it only reads the web, as read only reads files)
// unless a WebSearch rule denies it or asks about it, or the turn hides it.
func (a *Agent) offerSearch() bool {
	if slices.Contains(a.currentTurn().Hide, webSearch) {
		return false
	}
	if a.c.Rules == nil {
		return true
	}
	v := a.c.Rules().Decide(rules.Call{Tool: webSearch})
	return !v.Matched || v.Effect == rules.Allow
}

// searchPreview makes the call card of a logged search (tool.presentLogged
// reads it): no tool of the registry presents web_search.
type searchPreview struct {
	Title string        `json:"title"`
	Kind  card.ToolKind `json:"kind"`
}

// logSearch logs a search the provider ran as a call, which carries the
// provider's blocks (Signature) for the context builder, and its result: the
// sources, one "title\nurl" paragraph each, for every consumer's card.
func (a *Agent) logSearch(p provider.Part) error {
	args, err := json.Marshal(map[string]string{"query": p.Text})
	if err != nil {
		return err
	}
	preview, err := json.Marshal(searchPreview{Title: "Web search: " + p.Text, Kind: card.ToolSearch})
	if err != nil {
		return err
	}
	if err := a.record(session.Record{Type: session.TypeToolCall, CallID: p.ID, Name: webSearch, Args: args, Preview: preview, Signature: p.Signature}); err != nil {
		return fmt.Errorf("log web search: %w", err)
	}
	found := make([]string, 0, len(p.Sources))
	for _, s := range p.Sources {
		found = append(found, strings.TrimSpace(s.Title+"\n"+s.URL))
	}
	res := tool.Text(strings.Join(found, "\n\n"))
	if len(found) == 0 {
		res = tool.Text("No sources.")
	}
	if err := a.record(session.Record{Type: session.TypeToolResult, CallID: p.ID, Name: webSearch, Result: &res}); err != nil {
		return fmt.Errorf("log web search: %w", err)
	}
	return nil
}

// searchPart is the context's part of a logged search.
func searchPart(r session.Record) provider.Part {
	var in struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(r.Args, &in) // the provider replays its blocks; the query is only a label
	return provider.Part{Type: provider.PartWebSearch, ID: r.CallID, Name: r.Name, Text: in.Query, Signature: r.Signature}
}
