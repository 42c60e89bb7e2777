package acp

import (
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/host"
)

func commandsUpdate(cmds []host.Command) sdk.SessionUpdate {
	out := make([]sdk.AvailableCommand, 0, len(cmds))
	for _, c := range cmds {
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.ArgHint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.ArgHint}}
		}
		out = append(out, ac)
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: out}}
}

// sameOffer says whether two tables offer the client the same commands: a
// server that relisted (tools/list_changed) may leave them as they were.
func sameOffer(a, b []host.Command) bool {
	return slices.EqualFunc(a, b, func(x, y host.Command) bool {
		return x.Name == y.Name && x.Description == y.Description && x.ArgHint == y.ArgHint
	})
}
