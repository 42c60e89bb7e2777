package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// editorCommands are the slash commands a session in cwd offers: dsh's own that
// make sense in an editor, and the user's and the project's custom commands.
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

// compacter is the host's compaction, once it has one.
type compacter interface {
	Compact(ctx context.Context, focus string) error
}

// runCommand carries out a built-in command sent as a prompt; the answer is a
// message to the user, not a turn of the model. handled is false for a prompt
// that is not one of the session's built-in commands; a custom command comes
// back as the prompt it expands to.
func (a *Agent) runCommand(s *sess, text string) (prompt string, handled bool, err error) {
	name, args, ok := command.Parse(text)
	if !ok {
		return text, false, nil
	}
	c, ok := command.Find(s.cmds, name)
	switch {
	case !ok:
		return text, false, nil
	case c.Custom():
		return c.Expand(args), false, nil
	}
	switch c.Name {
	case "mode":
		if args == "" {
			s.say(fmt.Sprintf("The permission mode is %s. Modes: %s.", s.h.Mode(), modeNames()))
			return "", true, nil
		}
		m, err := agent.ParseMode(args)
		if err != nil {
			s.say(err.Error() + ".")
			return "", true, nil
		}
		if err := s.h.SetMode(m); err != nil {
			return "", true, err
		}
		s.say("Permission mode: " + string(m) + ".")
	case "model":
		model, thinking := a.currentModel(s)
		if args == "" {
			var names []string
			for _, m := range a.modelList() {
				names = append(names, m.ID)
			}
			s.say(fmt.Sprintf("The model is %s. Models: %s.", model, strings.Join(names, ", ")))
			return "", true, nil
		}
		if !a.offered(args) {
			s.say(fmt.Sprintf("Unknown model %q; /model lists them.", args))
			return "", true, nil
		}
		if err := s.h.SetModel(args, thinking); err != nil {
			return "", true, err
		}
		s.say("Model: " + args + ".")
	case "cost":
		s.say(s.costText(a))
	case "compact":
		cp, ok := any(s.h).(compacter)
		if !ok {
			s.say("Compaction is not available yet in this dsh.")
			return "", true, nil
		}
		if err := cp.Compact(context.Background(), args); err != nil {
			return "", true, err
		}
	default:
		return text, false, nil
	}
	return "", true, nil
}

func modeNames() string {
	names := make([]string, len(agent.Modes))
	for i, m := range agent.Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// costText answers /cost: the session's tokens and, where the price is known,
// what they cost.
func (s *sess) costText(a *Agent) string {
	s.mu.Lock()
	u := s.usage
	s.mu.Unlock()
	model, _ := a.currentModel(s)
	text := fmt.Sprintf("This session used %d input and %d output tokens", u.in, u.out)
	if !u.unpriced {
		text += fmt.Sprintf(", about $%.4f", u.cost)
	} else {
		text += " (the price is not known for every model used)"
	}
	if u.used > 0 {
		text += fmt.Sprintf("; the context holds %d of %d tokens", u.used, s.window(model))
	}
	return text + "."
}

// window is the context window of model: the configuration's, else the table's.
func (s *sess) window(model string) int64 {
	if n, ok := s.cfg.ContextWindow.For(model); ok {
		return n
	}
	return models.Lookup(model).ContextWindow
}
