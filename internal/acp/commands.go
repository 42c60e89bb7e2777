package acp

import (
	"strings"

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

// answers says the host answers text itself, with no model: a built-in
// command the editor offers (but /compact, which calls the model).
func (s *sess) answers(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return false
	}
	name, _, _ := strings.Cut(t[1:], " ")
	for _, c := range s.cmds {
		if c.Name == name {
			return !c.Custom() && name != "compact"
		}
	}
	return false
}
