package bash

// hookInput is a command as Claude Code's Bash tool gives it to hooks.
type hookInput struct {
	Command         string `json:"command"`
	Description     string `json:"description,omitempty"`
	Timeout         int    `json:"timeout,omitzero"` // milliseconds
	RunInBackground bool   `json:"run_in_background,omitzero"`
}

func hookCall(p params, _ string) (string, any) {
	return "Bash", hookInput{Command: p.Command, Description: p.Description, Timeout: p.TimeoutMS, RunInBackground: p.RunInBackground}
}
