package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/dsh-dev/dsh/internal/provider"
)

// WebSearchPrefix starts the Signature of a provider.PartWebSearch that holds
// Anthropic's server_tool_use and web_search_tool_result blocks (a JSON array
// of the two, as the API sent them), which later requests must replay.
const WebSearchPrefix = "anthropic-web-search:"

// webSearchMaxUses caps the searches of one response: each is billed.
const webSearchMaxUses = 5

func webSearchTool() sdk.ToolUnionParam {
	return sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{MaxUses: sdk.Int(webSearchMaxUses)}}
}

// searchUse starts the part of a server_tool_use block; args is its input.
func searchUse(b sdk.ContentBlockUnion, args []byte) (provider.Part, json.RawMessage) {
	var in struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(args, &in) // a query that does not decode is only not shown
	if len(args) == 0 || !json.Valid(args) {
		args = []byte(`{}`)
	}
	raw, _ := json.Marshal(struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}{"server_tool_use", b.ID, b.Name, args})
	return provider.Part{Type: provider.PartWebSearch, ID: b.ID, Text: in.Query}, raw
}

// searchResult completes part with a web_search_tool_result block.
func searchResult(part provider.Part, use json.RawMessage, b sdk.ContentBlockUnion) provider.Part {
	var res struct {
		Content json.RawMessage `json:"content"`
	}
	raw := json.RawMessage(b.RawJSON())
	_ = json.Unmarshal(raw, &res)
	var found []struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	// An error result's content is an object: no sources.
	if json.Unmarshal(res.Content, &found) == nil {
		for _, f := range found {
			part.Sources = append(part.Sources, provider.Source{URL: f.URL, Title: f.Title})
		}
	}
	blocks, _ := json.Marshal([]json.RawMessage{use, raw})
	part.Signature = WebSearchPrefix + string(blocks)
	return part
}

// searchBlocks are the blocks of a logged search, as they came.
func searchBlocks(sig string) ([]sdk.ContentBlockParamUnion, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimPrefix(sig, WebSearchPrefix)), &raws); err != nil {
		return nil, fmt.Errorf("a logged web search does not decode: %w", err)
	}
	out := make([]sdk.ContentBlockParamUnion, 0, len(raws))
	for _, raw := range raws {
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("a logged web search does not decode: %w", err)
		}
		switch head.Type {
		case "server_tool_use":
			var p sdk.ServerToolUseBlockParam
			param.SetJSON(raw, &p)
			out = append(out, sdk.ContentBlockParamUnion{OfServerToolUse: &p})
		case "web_search_tool_result":
			var p sdk.WebSearchToolResultBlockParam
			param.SetJSON(raw, &p)
			out = append(out, sdk.ContentBlockParamUnion{OfWebSearchToolResult: &p})
		default:
			return nil, fmt.Errorf("a logged web search holds a %q block", head.Type)
		}
	}
	return out, nil
}
