package bash

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func presentCall(p params) card.Call {
	if p.RunInBackground {
		c := &card.GenericCall{Title: "Background: " + p.Command, ToolKind: "execute"}
		if p.Description != "" {
			c.Content = []card.Content{card.Text(p.Description)}
		}
		return c
	}
	// The cwd is not in the arguments; the result's meta records it.
	return &card.TerminalCall{Title: p.Command, Description: p.Description}
}

func presentResult(p params, r tool.Result) card.Result {
	if p.RunInBackground {
		var m struct {
			JobID *string `json:"jobId"`
		}
		if r.IsError || json.Unmarshal(r.Meta, &m) != nil || m.JobID == nil || *m.JobID == "" {
			return nil
		}
		return &card.GenericResult{Title: "Started " + *m.JobID, Content: r.Content}
	}
	// A failing command still gets its terminal card: showing how a command
	// failed is the card's point. Only a command that never ran (no meta) has none.
	var m struct {
		ExitCode     *int    `json:"exitCode"`
		Signal       *string `json:"signal"`
		TimedOut     bool    `json:"timedOut"`
		OutputLength *int    `json:"outputLength"`
		Sandbox      string  `json:"sandbox"`
		Refused      string  `json:"sandboxRefused"`
	}
	if json.Unmarshal(r.Meta, &m) != nil || m.OutputLength == nil || (m.ExitCode == nil) == (m.Signal == nil) {
		return nil
	}
	text := r.TextOf()
	n := *m.OutputLength
	if n < 0 || n > len(text) || !utf8.ValidString(text[:n]) {
		return nil
	}
	c := &card.TerminalResult{Output: text[:n], ExitCode: m.ExitCode, TimedOut: m.TimedOut}
	if m.Signal != nil {
		c.Signal = *m.Signal
	}
	switch m.Sandbox {
	case "on", "network-off":
		c.Sandbox = &card.Sandbox{Network: m.Sandbox == "on", Refused: m.Refused}
	}
	return c
}

func presentJobOutputCall(p jobOutputParams) card.Call {
	return &card.GenericCall{Title: "Output of " + p.JobID, ToolKind: "execute"}
}

func presentJobOutputResult(_ jobOutputParams, r tool.Result) card.Result { return genericResult(r) }

func presentJobKillCall(p jobKillParams) card.Call {
	return &card.GenericCall{Title: "Kill " + p.JobID, ToolKind: "execute"}
}

func presentJobKillResult(_ jobKillParams, r tool.Result) card.Result { return genericResult(r) }

func presentJobListCall(jobListParams) card.Call {
	return &card.GenericCall{Title: "Background jobs", ToolKind: "other"}
}

func presentJobListResult(_ jobListParams, r tool.Result) card.Result { return genericResult(r) }

// genericResult shows a job tool's answer as it is; an error shows raw.
func genericResult(r tool.Result) card.Result {
	if r.IsError {
		return nil
	}
	return &card.GenericResult{Content: r.Content}
}
