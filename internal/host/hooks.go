package host

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/tool"
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

// hookBase is what a hook is told about the session: its id, and its
// transcript brought up to date; a subagent's hooks are told the parent's,
// and the subagent's own as the agent's.
func (s *Session) hookBase() hooks.Input {
	if sa := s.o.sub; sa != nil {
		b := sa.parent.hookBase()
		b.Cwd = s.ws.Cwd()
		b.AgentID, b.AgentType, b.AgentTranscriptPath = s.ID(), sa.agent, s.transcriptPath()
		return b
	}
	return hooks.Input{SessionID: s.ID(), TranscriptPath: s.transcriptPath(), Cwd: s.ws.Cwd()}
}

// transcriptPath is the session's transcript (hooks.Transcript), synced with
// the log now: a hook reads the conversation up to the moment it runs.
func (s *Session) transcriptPath() string {
	if s.log == nil {
		return ""
	}
	s.mu.Lock()
	if s.transcript == nil {
		model, _ := s.agent.Model()
		s.transcript = hooks.NewTranscript(s.log.Path(), model, shaper{s})
	}
	t := s.transcript
	s.mu.Unlock()
	if err := t.Sync(); err != nil {
		s.transcriptWarn.Do(func() { s.o.Warn("hooks: " + err.Error() + " (hooks read what it held before)") })
	}
	return t.Path()
}

// shaper gives the session's calls to the transcript in Claude Code's tools'
// shapes, as hooks see them.
type shaper struct{ s *Session }

func (sh shaper) HookCall(name string, args jsontext.Value) (string, jsontext.Value) {
	if t, ok := sh.s.reg.Get(name); ok {
		if hc, ok := t.(tool.HookCaller); ok {
			if n, in, ok := hc.HookCall(args, sh.s.ws.Cwd()); ok {
				return n, in
			}
		}
	}
	return name, args
}

func (sh shaper) HookResponse(name string, args jsontext.Value, r tool.Result) jsontext.Value {
	if t, ok := sh.s.reg.Get(name); ok {
		if hc, ok := t.(tool.HookCaller); ok {
			if v, ok := hc.HookResponse(args, r, sh.s.ws.Cwd()); ok {
				return v
			}
		}
	}
	return nil
}

// endHooks runs the SessionEnd hooks of a session whose SessionStart hooks
// ran, as it closes.
func (s *Session) endHooks() {
	s.mu.Lock()
	started := s.hooksStarted
	s.mu.Unlock()
	if !started {
		return
	}
	if _, err := s.agent.RunHooks(context.Background(), hooks.Input{Event: hooks.SessionEnd, Reason: "other"}); err != nil {
		s.o.Warn("hooks: " + err.Error())
	}
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
