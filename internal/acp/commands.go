package acp

import (
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
