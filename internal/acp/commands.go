package acp

import (
	"context"
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/host"
)

// editorCommands are the slash commands a session in cwd offers besides its
// host's: dsh's own that make sense in an editor, and the user's and the
// project's custom commands.
// Files that were refused are told to the user through warn.
func (a *Agent) editorCommands(cwd string, warn func(string)) []command.Command {
	cmds, err := command.All(command.Dirs(cwd, a.o.Getenv))
	if err != nil {
		a.o.Logger.Warn("reading custom commands", "err", err)
		warn("custom commands not offered: " + err.Error())
	}
	return command.For(cmds, command.Editor)
}

func commandsUpdate(cmds []command.Command) sdk.SessionUpdate {
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

// runCommand carries out a built-in command sent as a prompt, in the host; the
// answer is a message to the user, not a turn of the model. handled is false
// for a prompt that is not one of the session's built-in commands; a custom
// command comes back as the prompt it expands to.
func (a *Agent) runCommand(s *sess, text string) (prompt string, handled bool, err error) {
	name, args, ok := command.Parse(text)
	if !ok {
		return text, false, nil
	}
	c, ok := command.Find(s.cmds, name)
	switch {
	case !ok:
		return text, false, nil
	case c.MCP():
		prompt, _, err := s.h.ExpandPrompt(context.Background(), c.Name, args)
		if err != nil {
			return "", true, err
		}
		return prompt, false, nil
	case c.Custom():
		return c.Expand(args), false, nil
	}
	r, err := s.h.Command(context.Background(), c.Name, args)
	if errors.Is(err, host.ErrNotBuiltin) {
		return text, false, nil
	}
	if r.Text != "" {
		// The command's own updates (a model or mode record's config options)
		// go out first, so its answer always comes after them.
		s.sub.Flush(flushWait)
		s.say(r.Text)
	}
	return "", true, err
}
