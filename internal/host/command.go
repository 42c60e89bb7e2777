package host

import (
	"context"
	"errors"
	"fmt"
	"github.com/dsh-dev/dsh/internal/session"
	"slices"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// Reply is a built-in command's answer, for the user.
type Reply struct {
	Text string // "" when the records the command logged say it all (/compact)
	// Models is what /model without a name lists: the models it accepts, the
	// ones the editor's model picker offers.
	Models []Model
	// Points is what /rewind without an argument lists: the changes it can go
	// back before.
	Points []Point
	// Diff is the change /diff shows, file by file (the reply's record holds it).
	Diff []session.RestoredFile
	// Fork is the session a /rewind of the conversation started: the consumer
	// may go on in it.
	Fork string
	// Action is what a command of the consumer's own asks it to do (/new,
	// /resume, /exit); Arg is its argument (the session /resume names).
	Action Action
	Arg    string
	// Prompt is what a command hands the model (/init, /review): Submit runs
	// it as a turn, after Run, a command run as the user's own (the diff
	// /review is about).
	Prompt, Run string
}

// Action is what a consumer does for one of its own commands: the host
// parses them with the rest, but opening another session or leaving is the
// consumer's.
type Action int

// The actions.
const (
	ActionNone   Action = iota
	ActionNew           // open a new session
	ActionResume        // open session Arg, or offer a list when Arg is ""
	ActionExit          // end the session and quit
)

// builtin is a built-in slash command and the function that carries it out.
// A consumer's command only asks its consumer to act (Reply.Action), or
// hands the model a prompt (Reply.Prompt, which Submit logs as the user's): it
// changes nothing of the session itself and is not logged.
type builtin struct {
	Command
	run      func(s *Session, ctx context.Context, args string) (Reply, error)
	consumer bool
}

// builtins is the one table of dsh's own slash commands: adding one is an
// entry here. Where says which consumers offer it (the chat and dsh run are
// the terminal, ACP the editor). (Set in init: /help lists the table.)
var builtins []builtin

func init() {
	builtins = []builtin{
		{Command{Name: "help", Description: "list the commands", Where: Terminal},
			func(s *Session, _ context.Context, _ string) (Reply, error) {
				return Reply{Text: s.helpText(Terminal)}, nil
			}, false},
		{Command{Name: "new", Description: "start a new session in this directory", Where: Terminal},
			func(*Session, context.Context, string) (Reply, error) { return Reply{Action: ActionNew}, nil }, true},
		{Command{Name: "resume", Description: "reopen an earlier session of this directory", ArgHint: "[id]", Where: Terminal},
			func(_ *Session, _ context.Context, args string) (Reply, error) {
				return Reply{Action: ActionResume, Arg: args}, nil
			}, true},
		{Command{Name: "sessions", Description: "list this directory's sessions", Where: Terminal},
			func(s *Session, _ context.Context, _ string) (Reply, error) {
				return Reply{Text: s.sessionsText()}, nil
			}, false},
		{Command{Name: "mode", Description: "show or set the permission mode", ArgHint: "[default|accept-edits|auto|bypass|read-only|plan]", Where: Both},
			func(s *Session, _ context.Context, args string) (Reply, error) { return s.modeCommand(args) }, false},
		{Command{Name: "model", Description: "show or set the model and its thinking level", ArgHint: "[name [thinking]]", Where: Both},
			func(s *Session, _ context.Context, args string) (Reply, error) { return s.modelCommand(args) }, false},
		{Command{Name: "compact", Description: "summarise the conversation so far to free the context", ArgHint: "[focus]", Where: Both},
			(*Session).compactCommand, false},
		{Command{Name: "cost", Description: "tokens used and their cost so far", Where: Both},
			func(s *Session, _ context.Context, _ string) (Reply, error) {
				return Reply{Text: CostText(s.Status())}, nil
			}, false},
		{Command{Name: "mcp", Description: "list the MCP servers, their tools, prompts and resources", Where: Both},
			func(s *Session, ctx context.Context, _ string) (Reply, error) { return s.mcpCommand(ctx), nil }, false},
		{Command{Name: "permissions", Description: "list the permission rules, or add or remove one of yours", ArgHint: "[[remove] allow|ask|deny RULE]", Where: Both},
			(*Session).permissionsCommand, false},
		{Command{Name: "agents", Description: "list the agents the task tool can start", Where: Both},
			func(s *Session, _ context.Context, _ string) (Reply, error) { return Reply{Text: s.agentsText()}, nil }, false},
		{Command{Name: "undo", Description: "put back the files the last prompt (or undo) changed, after showing the diff", ArgHint: "[--overwrite]", Where: Both},
			(*Session).undoCommand, false},
		{Command{Name: "rewind", Description: "list the changes so far, or go back to before change N: the files (code), the conversation (a new session) or both", ArgHint: "[N [code|conversation|both]] [--overwrite]", Where: Both},
			(*Session).rewindCommand, false},
		{Command{Name: "init", Description: "survey the project and write an AGENTS.md for it (asked like any write)", Where: Both},
			initReply, true},
		{Command{Name: "review", Description: "review the working tree's uncommitted changes, or a branch's", ArgHint: "[branch]", Where: Both},
			reviewReply, true},
		{Command{Name: "diff", Description: "show what the session, or change N, changed in the files", ArgHint: "[N]", Where: Both},
			(*Session).diffCommand, false},
		{Command{Name: "rename", Description: "name this session (lists and pickers show the name)", ArgHint: "[title]", Where: Both},
			(*Session).renameCommand, false},
		{Command{Name: "exit", Description: "end the session and quit", Where: Terminal},
			func(*Session, context.Context, string) (Reply, error) { return Reply{Action: ActionExit}, nil }, true},
	}
}

// Builtins are dsh's own slash commands that the consumer where offers,
// which every session has: what it offers before its session is open.
func Builtins(where Where) []Command {
	var out []Command
	for _, b := range builtins {
		if b.Where&where != 0 {
			out = append(out, b.Command)
		}
	}
	return out
}

func findBuiltin(name string) (builtin, bool) {
	for _, b := range builtins {
		if b.Name == name {
			return b, true
		}
	}
	return builtin{}, false
}

// modelListWait bounds how long listing the provider's models may take; the
// built-in list stands in when it does not come in time.
const modelListWait = 5 * time.Second

// runBuiltin carries out a built-in command, logged as typed before it runs
// and with its answer after, so a reload shows both again where they were;
// what only the consumer does (/new, /exit) or a prompt the model is handed
// (/init) is not logged as a command — but for an answer in words (/review's
// to a bad argument), logged after it.
func (s *Session) runBuiltin(ctx context.Context, b builtin, typed, args string) (Reply, error) {
	if !b.consumer {
		if _, err := s.put(session.Record{Type: session.TypeCommand, Text: typed}); err != nil {
			return Reply{}, err
		}
	}
	r, err := b.run(s, ctx, strings.TrimSpace(args))
	if err != nil || r.Text == "" {
		return r, err
	}
	if b.consumer {
		if _, err := s.put(session.Record{Type: session.TypeCommand, Text: typed}); err != nil {
			return Reply{}, err
		}
	}
	_, err = s.put(session.Record{Type: session.TypeReply, Text: r.Text, Diff: r.Diff})
	return r, err
}

func (s *Session) compactCommand(ctx context.Context, focus string) (Reply, error) {
	err := s.Compact(ctx, focus)
	switch {
	case errors.Is(err, agent.ErrNothingToCompact):
		return Reply{Text: "There is nothing to compact yet."}, nil
	case errors.Is(err, ErrBusy):
		return Reply{Text: "A turn is running: wait for it, or cancel it, before compacting."}, nil
	}
	return Reply{}, err
}

func (s *Session) modeCommand(args string) (Reply, error) {
	if args == "" {
		return Reply{Text: fmt.Sprintf("The permission mode is %s. Modes: %s.", s.Mode(), strings.Join(s.modeNames(), ", "))}, nil
	}
	m, err := agent.ParseMode(args)
	if err == nil {
		err = s.agent.Settable(m)
	}
	if err != nil {
		return Reply{Text: "Cannot set the mode: " + err.Error() + "."}, nil
	}
	if err := s.SetMode(m); err != nil {
		return Reply{}, err
	}
	return Reply{}, nil // the mode record says it
}

// modeNames are the modes this session may be set to.
func (s *Session) modeNames() []string {
	var names []string
	for _, m := range s.Modes() {
		names = append(names, string(m))
	}
	return names
}

func (s *Session) modelCommand(args string) (Reply, error) {
	model, thinking := s.Model()
	f := strings.Fields(args)
	switch len(f) {
	case 0:
		list := s.Models()
		var b strings.Builder
		fmt.Fprintf(&b, "The model is %s, thinking %s. /model NAME [THINKING] changes them; the models:",
			orDefault(model, "the provider's default"), orDefault(thinking, "as configured"))
		for _, m := range list {
			fmt.Fprintf(&b, "\n- %s", m.ID)
			if m.Name != m.ID && m.Name != "" {
				fmt.Fprintf(&b, " (%s)", m.Name)
			}
		}
		return Reply{Text: b.String(), Models: list}, nil
	case 1, 2:
	default:
		return Reply{Text: "Cannot set the model: want /model NAME [THINKING]."}, nil
	}
	if len(f) == 2 {
		thinking = f[1]
	}
	if err := s.CheckModel(f[0]); err != nil {
		return Reply{Text: "Cannot set the model: " + err.Error() + "."}, nil
	}
	if err := CheckThinking(thinking); err != nil {
		return Reply{Text: "Cannot set the model: " + err.Error() + "."}, nil
	}
	if thinking == ThinkingDefault {
		thinking = ""
	}
	if err := s.SetModel(f[0], thinking); err != nil {
		return Reply{}, err
	}
	return Reply{}, nil // the model record says it
}

// ThinkingDefault is the thinking level that means "as configured".
const ThinkingDefault = "default"

// ThinkingLevel is a thinking level a consumer offers, with what it means.
type ThinkingLevel struct{ Value, Name, Desc string }

// ThinkingLevels are the levels the consumers offer (the editor's thinking
// option, the chat's model picker), ThinkingDefault first.
var ThinkingLevels = []ThinkingLevel{
	{ThinkingDefault, "Default", "As configured (--thinking or the config file)"},
	{"off", "Off", "No extended thinking"},
	{"adaptive", "Adaptive", "The model decides when and how much to think"},
	{"low", "Low", "Think a little"},
	{"medium", "Medium", "Think more"},
	{"high", "High", "Think hard"},
	{"xhigh", "Extra high", "Think harder"},
	{"max", "Max", "Think as hard as the model can"},
}

// CheckThinking reports whether level is a thinking level a session may be
// set to: ThinkingDefault, one of the levels, or a token budget.
func CheckThinking(level string) error {
	if level == ThinkingDefault {
		return nil
	}
	_, _, err := config.ParseThinking(level)
	return err
}

// CheckModel reports whether model is one the session may be set to: one of
// Models, or the one it started with or uses.
func (s *Session) CheckModel(model string) error {
	cur, _ := s.Model()
	if model == s.o.Model || model == cur || slices.ContainsFunc(s.Models(), func(m models.Info) bool { return m.ID == model }) {
		return nil
	}
	return fmt.Errorf("unknown model %q (/model lists them)", model)
}

// Models lists the models the session accepts (Options.Models, listed once),
// the built-in list when there is none or it fails.
func (s *Session) Models() []models.Info {
	s.modelsOnce.Do(func() {
		if s.o.Models != nil {
			ctx, cancel := context.WithTimeout(s.ctx, modelListWait)
			defer cancel()
			ms, err := s.o.Models(ctx)
			if err != nil {
				s.o.Warn(fmt.Sprintf("listing the models: %v", err))
			}
			s.models = ms
		}
		if len(s.models) == 0 {
			s.models = models.Builtin("")
		}
	})
	return s.models
}

// CostText is /cost's answer: the session's tokens, what they cost where the
// price is known, and how full the context is.
func CostText(st Status) string {
	text := fmt.Sprintf("This session used %d input and %d output tokens", st.InputTokens, st.OutputTokens)
	switch {
	case st.Unpriced && st.Cost > 0:
		text += fmt.Sprintf(", about $%.4f for those whose price is known (not every model's is)", st.Cost)
	case st.Unpriced:
		text += " (the price is not known for every model used)"
	default:
		text += fmt.Sprintf(", about $%.4f", st.Cost)
	}
	if st.Window > 0 {
		text += fmt.Sprintf("; the context holds %d of %d tokens (%d%%)", st.ContextTokens, st.Window, st.ContextTokens*100/st.Window)
	}
	return text + "."
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
