package bash

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/tool"
)

// hookInput is a command as Claude Code's Bash tool gives it to hooks.
type hookInput struct {
	Command         string `json:"command"`
	Description     string `json:"description,omitempty"`
	Timeout         int    `json:"timeout,omitzero"` // milliseconds
	RunInBackground bool   `json:"run_in_background,omitzero"`
}

// hookResponse is a command's result as Claude Code's Bash tool gives it to
// PostToolUse hooks. dsh reads a command's stdout and stderr through one pipe
// (they interleave as produced), so all of it is stdout.
type hookResponse struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Interrupted      bool   `json:"interrupted"`
	IsImage          bool   `json:"isImage"`
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
}

func hookCall(p params, _ string) (string, any) {
	return "Bash", hookInput{Command: p.Command, Description: p.Description, Timeout: p.TimeoutMS, RunInBackground: p.RunInBackground}
}

func unhook(p params, input jsontext.Value, _ string) (params, error) {
	var in hookInput
	if err := json.Unmarshal(input, &in); err != nil {
		return p, err
	}
	return params{Command: in.Command, Description: in.Description, TimeoutMS: in.Timeout, RunInBackground: in.RunInBackground}, nil
}

func hookResult(_ params, r tool.Result, m *meta, _ string) any {
	out := r.TextOf()
	var resp hookResponse
	if m != nil {
		if m.OutputLength != nil && *m.OutputLength <= len(out) {
			out = out[:*m.OutputLength] // the notes for the model after it are not the command's
		}
		resp.Interrupted, resp.BackgroundTaskID = m.Cancelled || m.TimedOut, m.JobID
	}
	resp.Stdout = out
	return resp
}
