package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/dsh-dev/dsh/internal/provider"
)

// WebSearchPrefix starts the Signature of a provider.PartWebSearch that holds
// a Responses web_search_call item (its JSON, as the API sent it), which
// later requests send back verbatim, as they do reasoning items.
const WebSearchPrefix = "openai-web-search:"

// webSearchTool is the Responses API's server-side search.
func webSearchTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}
}

// searchCall is the part of a web_search_call item dsh reads.
type searchCall struct {
	ID     string `json:"id"`
	Action struct {
		Query   string `json:"query"`
		Sources []struct {
			URL string `json:"url"`
		} `json:"sources"`
	} `json:"action"`
}

// searchPart is the part of a web_search_call item; its sources are the
// action's, which the url_citation annotations of the answer complete.
func searchPart(raw string) (provider.Part, error) {
	var c searchCall
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return provider.Part{}, fmt.Errorf("openai: a malformed web_search_call item: %w", err)
	}
	p := provider.Part{Type: provider.PartWebSearch, ID: c.ID, Name: "web_search", Text: c.Action.Query, Signature: WebSearchPrefix + raw}
	for _, s := range c.Action.Sources {
		p.Sources = addSource(p.Sources, provider.Source{URL: s.URL})
	}
	return p, nil
}

// addSource adds s once, keeping the first title found for its URL.
func addSource(ss []provider.Source, s provider.Source) []provider.Source {
	for i := range ss {
		if ss[i].URL == s.URL {
			if ss[i].Title == "" {
				ss[i].Title = s.Title
			}
			return ss
		}
	}
	return append(ss, s)
}

// searchItem is the input item of a logged search, or nil for another
// provider's.
func searchItem(sig string) *responses.ResponseInputItemUnionParam {
	raw, ok := strings.CutPrefix(sig, WebSearchPrefix)
	if !ok {
		return nil
	}
	var item responses.ResponseFunctionWebSearchParam
	param.SetJSON([]byte(raw), &item)
	return &responses.ResponseInputItemUnionParam{OfWebSearchCall: &item}
}
