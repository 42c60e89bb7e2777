package host

import (
	"context"

	"github.com/dsh-dev/dsh/internal/hooks"
)

// hookRunner is the session's hooks, run in its workspace root with the
// environment its commands get; a hook whose matcher is not one is left out,
// with a warning.
func hookRunner(o Options, root string) *hooks.Runner {
	if len(o.Hooks) == 0 {
		return nil
	}
	r, err := hooks.New(o.Hooks, root, hooks.Env(o.KeepEnv))
	if err != nil {
		o.Warn("hooks not run: " + err.Error())
	}
	return r
}

// hookBase is what a hook is told about the session.
func (s *Session) hookBase() hooks.Input {
	return hooks.Input{SessionID: s.ID(), TranscriptPath: s.Path(), Cwd: s.ws.Cwd()}
}

// promptHooks runs, before a prompt, the SessionStart hooks (at the first
// prompt of this host's session: a session only opened to be shown or
// replayed runs none) and the UserPromptSubmit hooks. blocked says a hook
// blocked the prompt, which is then not sent; what hooks add to the context
// is in their records, which the agent folds before the prompt.
func (s *Session) promptHooks(ctx context.Context, text string) (blocked bool, err error) {
	s.mu.Lock()
	first := !s.hooksStarted
	s.hooksStarted = true
	s.mu.Unlock()
	if first {
		s.undo.mu.Lock()
		source := "startup"
		if s.undo.prompts > 0 {
			source = "resume"
		}
		s.undo.mu.Unlock()
		if _, err := s.agent.RunHooks(ctx, hooks.Input{Event: hooks.SessionStart, Source: source}); err != nil {
			return false, err
		}
	}
	o, err := s.agent.RunHooks(ctx, hooks.Input{Event: hooks.UserPromptSubmit, Prompt: text})
	if err != nil {
		return false, err
	}
	return o.Decision == "block" || o.Stop, nil
}
