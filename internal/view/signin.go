package view

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
)

// SignInCards present a sign-in to an MCP server: the link to open while it
// waits for the user, then whether it happened.
func SignInCards(s session.SignIn) (*card.GenericCall, *card.GenericResult) {
	call := &card.GenericCall{Title: "Sign in to MCP server " + s.Server, ToolKind: card.ToolFetch}
	res := &card.GenericResult{}
	switch s.State {
	case session.SignInWaiting:
		call.Content = []card.Content{card.Text(s.URL)}
		res.Title = "waiting for you: open the link (or run dsh mcp login " + s.Server + ")"
	case session.SignInDone:
		res.Title = "signed in: its tools are ready"
	default:
		res.Title = "the sign-in failed"
		if s.Error != "" {
			res.Title += ": " + s.Error
		}
	}
	return call, res
}
