package fetch

// hookInput is a fetch as Claude Code's WebFetch gives it to hooks.
type hookInput struct {
	URL    string `json:"url"`
	Prompt string `json:"prompt"`
}

func hookCall(p Params, _ string) (string, any) {
	return "WebFetch", hookInput(p)
}
