package bash

import (
	"strings"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func presentCall(p params, _ *meta) card.Call {
	if p.RunInBackground {
		c := &card.GenericCall{Title: "Background: " + p.Command}
		if p.Description != "" {
			c.Content = []card.Content{card.Text(p.Description)}
		}
		return c
	}
	// The cwd is not in the arguments; the result's meta records it.
	return &card.TerminalCall{Title: p.Command, Description: p.Description}
}

func presentResult(p params, r tool.Result, m *meta) card.Result {
	if m == nil {
		return nil
	}
	if p.RunInBackground {
		if r.IsError || m.JobID == "" {
			return nil
		}
		// The result's text tells the model how to read the job; the user is
		// told what happens to it.
		return &card.GenericResult{Title: "Started " + m.JobID,
			Content: []card.Content{card.Text("Runs in the background until it exits, is killed, or the session ends.")}}
	}
	// A failing command still gets its terminal card: showing how a command
	// failed is the card's point. Only a command that never ran (no meta) has none.
	if m.JobID != "" {
		return nil
	}
	text := r.TextOf()
	n := *m.OutputLength
	if n > len(text) || !utf8.ValidString(text[:n]) {
		return nil
	}
	c := &card.TerminalResult{Output: text[:n], ExitCode: m.ExitCode, Signal: m.Signal, TimedOut: m.TimedOut, Lines: int(m.OutputLines)}
	// The mode's names, not the sandbox package: presenters stay pure.
	if mode := string(m.Sandbox); mode == "on" || mode == "network-off" {
		c.Sandbox = &card.Sandbox{Network: mode == "on", Refused: m.SandboxRefused}
	}
	return c
}

func presentJobOutputCall(p jobOutputParams, _ *tool.NoMeta) card.Call {
	return &card.GenericCall{Title: "Output of " + p.JobID}
}

func presentJobOutputResult(_ jobOutputParams, r tool.Result, _ *tool.NoMeta) card.Result {
	return genericResult(r)
}

func presentJobKillCall(p jobKillParams, _ *tool.NoMeta) card.Call {
	return &card.GenericCall{Title: "Kill " + p.JobID}
}

// killedNote tells the model where a killed job's output went; the user
// reads the job's end without it.
const killedNote = " Its remaining output is available with job_output."

func presentJobKillResult(_ jobKillParams, r tool.Result, _ *tool.NoMeta) card.Result {
	if r.IsError {
		return nil
	}
	return &card.GenericResult{Content: []card.Content{card.Text(forUser(strings.TrimSuffix(r.TextOf(), killedNote)))}}
}

// forUser is a job tool's text as the user reads it: a job killed on the
// model's request is said so without the tool's name.
func forUser(text string) string {
	return strings.ReplaceAll(text, " ("+killedBy+")", "")
}

func presentJobListCall(jobListParams, *tool.NoMeta) card.Call {
	return &card.GenericCall{Title: "Background jobs"}
}

func presentJobListResult(_ jobListParams, r tool.Result, _ *tool.NoMeta) card.Result {
	return genericResult(r)
}

// genericResult shows a job tool's answer as it is, for the user; an error
// shows raw.
func genericResult(r tool.Result) card.Result {
	if r.IsError {
		return nil
	}
	return &card.GenericResult{Content: []card.Content{card.Text(forUser(r.TextOf()))}}
}
