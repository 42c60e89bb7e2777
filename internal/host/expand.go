package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/rules"
)

// vars are what ${NAME} in a command's body expands to for every command.
func (s *Session) vars() map[string]string {
	return map[string]string{"CLAUDE_PROJECT_DIR": s.Root()}
}

// commandTurn is what a custom command's or a skill's front matter changes
// for its turn: the tools it pre-approves and hides, its model. What is not
// taken is told as a notice: an untrusted repository's file may neither
// pre-approve a tool nor choose the model; a rule or model dsh does not know
// is ignored.
func (s *Session) commandTurn(c Command) agent.Turn {
	var turn agent.Turn
	notice := func(format string, a ...any) {
		s.notice(fmt.Sprintf("/"+c.Name+": "+format, a...))
	}
	for _, t := range c.Run.Disallowed {
		name := agents.ToolName(t)
		if t == "Edit" {
			turn.Hide = append(turn.Hide, "edit", "write")
			continue
		}
		turn.Hide = append(turn.Hide, name)
	}
	if len(c.Run.Allowed) > 0 {
		if c.Untrusted {
			notice("allowed-tools ignored: the project is not trusted, so its commands' calls are asked about as any other")
		} else {
			turn.Allow = s.allowedTools(c.Name, c.Run.Allowed, func(err error) {
				notice("allowed-tools: %v; those calls are asked about as any other", err)
			})
		}
	}
	if m := c.Run.Model; m != "" {
		switch id, ok := s.knownModel(m); {
		case c.Untrusted:
			notice("model %s ignored: the project is not trusted, so the session's model runs", m)
		case !ok:
			notice("model %s is not one dsh knows; the session's model runs", m)
		default:
			turn.Model = id
		}
	}
	return turn
}

// knownModel is the model m names: one the session may be set to, or the
// newest of a family Claude Code names by its alias (haiku, sonnet, opus).
func (s *Session) knownModel(m string) (string, bool) {
	if s.CheckModel(m) == nil {
		return m, true
	}
	if !slices.Contains([]string{"haiku", "sonnet", "opus"}, m) {
		return "", false
	}
	i := slices.IndexFunc(s.Models(), func(info models.Info) bool { return strings.Contains(info.ID, m) })
	if i < 0 {
		return "", false
	}
	return s.Models()[i].ID, true
}

// runBodyShell runs the !`cmd` commands of a command's expanded body as the
// bash tool would run a model's call — its hooks, the mode, the permission
// question (always, for an untrusted repository's command), the sandbox,
// a terminal card — each in order, and puts its output where it stood. A
// call that was not run leaves what the model is told about it.
func (s *Session) runBodyShell(ctx context.Context, text string, turn agent.Turn, ask bool) (string, error) {
	var out strings.Builder
	last := 0
	for _, m := range command.BodyShell().FindAllStringSubmatchIndex(text, -1) {
		out.WriteString(text[last:m[0]])
		last = m[1]
		args, err := json.Marshal(map[string]string{"command": text[m[2]:m[3]]})
		if err != nil {
			return "", err
		}
		tctx, done, err := s.beginTurn(ctx)
		if err != nil {
			return "", err
		}
		res, err := s.agent.RunAsked(tctx, turn, "bash", args, ask)
		done()
		if err != nil {
			return "", err
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		out.WriteString(strings.TrimRight(res.TextOf(), "\n"))
	}
	out.WriteString(text[last:])
	return out.String(), nil
}

// expandCustom is a custom command's or a skill's expansion for args, with
// the turn its front matter asks for; its !`cmd` commands are left for
// runBodyShell, which runs them in the turn's place in the queue.
func (s *Session) expandCustom(c Command, args string) (string, agent.Turn, error) {
	text, err := c.Text(args, s.vars())
	if err != nil {
		return "", agent.Turn{}, err
	}
	return text, s.commandTurn(c), nil
}

// submitCommand runs a custom command's or a skill's turn: its body's
// commands first, then the prompt made of it, the front matter's turn in
// force throughout.
func (s *Session) submitCommand(ctx context.Context, in Input, c Command, args string) (Answer, error) {
	text, turn, err := s.expandCustom(c, args)
	if err != nil {
		return Answer{}, fmt.Errorf("/%s: %w", c.Name, err)
	}
	release, err := s.awaitTurn(ctx)
	if errors.Is(err, errDropped) {
		return Answer{Turn: true, Stop: StopCancelled}, nil
	}
	if err != nil {
		return Answer{}, err
	}
	defer release()
	if command.BodyShell().MatchString(text) {
		// What the body's commands change is the prompt's: its "before" is
		// taken ahead of them, so /undo and /rewind put it back too.
		n := s.beginCheckpoint(ctx)
		s.undo.mu.Lock()
		s.undo.early = n
		s.undo.mu.Unlock()
		if text, err = s.runBodyShell(ctx, text, turn, c.Untrusted); err != nil {
			s.undo.mu.Lock()
			s.undo.early = 0
			s.undo.mu.Unlock()
			s.endCheckpoint(n)
			if ctx.Err() != nil {
				return Answer{Turn: true, Stop: StopCancelled}, nil
			}
			return Answer{}, err
		}
	}
	content := []card.Content{card.Expansion("/"+c.Name, text)}
	content = append(content, in.Content...)
	files, skipped := s.attachFiles(text)
	for _, sk := range skipped {
		s.notice("not attached: " + sk)
	}
	stop, err := s.prompt(ctx, turn, in.Text, append(content, files...)...)
	return Answer{Turn: true, Stop: stop}, err
}

// allowedTools reads a command's allowed-tools as the permission rules they
// are (Claude Code's syntax), allow rules for its turn only; one dsh cannot
// match is told and left out.
func (s *Session) allowedTools(name string, list []string, bad func(error)) *rules.Set {
	home, _ := os.UserHomeDir() // without one, a ~/ rule is told as not understood
	base := rules.Base{Root: s.ws.Root(), Cwd: s.ws.Cwd(), Home: home}
	var rs []rules.Rule
	for _, text := range list {
		r, err := rules.Parse(text, rules.Allow, "/"+name+"'s allowed-tools", base)
		if err != nil {
			bad(err)
			continue
		}
		rs = append(rs, r)
	}
	return rules.NewSet(rs...)
}
