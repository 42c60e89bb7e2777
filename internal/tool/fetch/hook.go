package fetch

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/tool"
)

// hookInput is a fetch as Claude Code's WebFetch gives it to hooks.
type hookInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

// hookResponse is a fetch's result as Claude Code's WebFetch gives it to
// PostToolUse hooks.
type hookResponse struct {
	URL    string `json:"url"`
	Code   int    `json:"code"`
	Result string `json:"result"`
	Bytes  int    `json:"bytes"`
}

func hookCall(p Params, _ string) (string, any) {
	return "WebFetch", hookInput(p)
}

func unhook(p Params, input jsontext.Value, _ string) (Params, error) {
	var in hookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return Params(in), nil
}

func hookResult(p Params, r tool.Result, m *Meta, _ string) any {
	resp := hookResponse{URL: p.URL, Result: r.TextOf()}
	resp.Bytes = len(resp.Result)
	if m != nil {
		resp.URL, resp.Code = m.URL, m.Status
	}
	return resp
}
