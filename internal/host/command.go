package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/config"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// ErrNotBuiltin is Command's error for a name the host does not carry out: a
// consumer's own command (/help, /resume …) or a custom one.
var ErrNotBuiltin = errors.New("not a built-in command of the session")

// Reply is a built-in command's answer, for the user.
type Reply struct {
	Text string // "" when the records the command logged say it all (/compact)
	// Models is what /model without a name lists: the models it accepts, the
	// ones the editor's model picker offers.
	Models []models.Info
	// Points is what /rewind without an argument lists: the changes it can go
	// back before.
	Points []Point
	// Fork is the session a /rewind of the conversation started: the consumer
	// may go on in it.
	Fork string
}

// modelListWait bounds how long listing the provider's models may take; the
// built-in list stands in when it does not come in time.
const modelListWait = 5 * time.Second

// Command runs the built-in slash command name (without its slash) on args,
// the one implementation every consumer calls: mode, model, compact, cost,
// mcp, undo and rewind.
// A bad argument is a Reply that says what is wrong; an error is a failure of
// the session (closed, the log) or ErrNotBuiltin.
func (s *Session) Command(ctx context.Context, name, args string) (Reply, error) {
	args = strings.TrimSpace(args)
	switch name {
	case "mode":
		return s.modeCommand(args)
	case "model":
		return s.modelCommand(args)
	case "cost":
		return Reply{Text: CostText(s.Status())}, nil
	case "mcp":
		return s.mcpCommand(ctx), nil
	case "agents":
		return Reply{Text: s.agentsText()}, nil
	case "undo":
		return s.undoCommand(ctx, args)
	case "rewind":
		return s.rewindCommand(ctx, args)
	case "compact":
		err := s.Compact(ctx, args)
		switch {
		case errors.Is(err, agent.ErrNothingToCompact):
			return Reply{Text: "There is nothing to compact yet."}, nil
		case errors.Is(err, ErrBusy):
			return Reply{Text: "A turn is running: wait for it, or cancel it, before compacting."}, nil
		}
		return Reply{}, err
	}
	return Reply{}, ErrNotBuiltin
}

func (s *Session) modeCommand(args string) (Reply, error) {
	if args == "" {
		return Reply{Text: fmt.Sprintf("The permission mode is %s. Modes: %s.", s.Mode(), strings.Join(s.modeNames(), ", "))}, nil
	}
	m, err := agent.ParseMode(args)
	if err == nil && m == agent.ModeAuto && !s.AutoAvailable() {
		err = agent.ErrNoSandbox
	}
	if err != nil {
		return Reply{Text: "Cannot set the mode: " + err.Error() + "."}, nil
	}
	if err := s.SetMode(m); err != nil {
		return Reply{}, err
	}
	return Reply{Text: "Permission mode: " + string(m) + "."}, nil
}

// modeNames are the modes this session may be set to.
func (s *Session) modeNames() []string {
	var names []string
	for _, m := range agent.Modes {
		if m != agent.ModeAuto || s.AutoAvailable() {
			names = append(names, string(m))
		}
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
	return Reply{Text: fmt.Sprintf("Model: %s, thinking %s.", f[0], orDefault(thinking, "as configured"))}, nil
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
