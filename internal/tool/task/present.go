package task

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func agentName(p params) string {
	if p.Agent == "" {
		return Explore
	}
	return p.Agent
}

func presentCall(p params, _ *Meta) card.Call {
	return &card.TaskCall{Title: p.Description, Agent: agentName(p), Prompt: p.Prompt}
}

// presentResult names the child session, so consumers nest its cards under
// this one; a task that failed before it had a session shows raw.
func presentResult(p params, r tool.Result, m *Meta) card.Result {
	if m == nil {
		return nil
	}
	return &card.TaskResult{Title: p.Description, Agent: m.Agent, Session: m.Session, Text: r.TextOf(),
		Calls: m.Calls, Stop: m.Stop, Tokens: m.Tokens()}
}
