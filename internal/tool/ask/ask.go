// Package ask is ask_user: the model puts a question with 2–4 options to the
// user, who picks one or answers in their own words, and the answer is the
// tool's result.
package ask

import (
	"context"
	_ "embed"
	"errors"
	"strconv"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

var (
	//go:embed ask.md
	description string
	//go:embed guidance.md
	guidance string
)

type option struct {
	Label       string `json:"label" jsonschema:"minLength=1" jsonschema_description:"The answer, in a few words."`
	Description string `json:"description,omitempty" jsonschema_description:"What choosing it means."`
}

type params struct {
	Question string   `json:"question" jsonschema:"minLength=1" jsonschema_description:"The question."`
	Options  []option `json:"options" jsonschema:"minItems=2,maxItems=4" jsonschema_description:"2 to 4 distinct answers."`
}

// meta is the answer; the choices are the options numbered from 1.
type meta struct {
	Answer card.Answer `json:"answer"`
}

// The number of options a question offers.
const (
	minOptions = 2
	maxOptions = 4
)

// Tool returns ask_user.
func Tool() tool.Tool {
	return tool.New(tool.Spec[params, meta]{
		Name:          "ask_user",
		Description:   description,
		Guidance:      guidance,
		Permission:    tool.PermNone, // asking is the point
		Kind:          card.ToolThink,
		Execute:       execute,
		PresentCall:   presentCall,
		PresentResult: presentResult,
	})
}

// choices numbers the options: their ids are "1" to "4".
func choices(p params) []card.Choice {
	out := make([]card.Choice, len(p.Options))
	for i, o := range p.Options {
		out[i] = card.Choice{ID: strconv.Itoa(i + 1), Label: o.Label, Description: o.Description}
	}
	return out
}

func check(p params) string {
	if strings.TrimSpace(p.Question) == "" {
		return "The question is empty."
	}
	if n := len(p.Options); n < minOptions || n > maxOptions {
		return "A question offers 2 to 4 options; this one has " + strconv.Itoa(n) + "."
	}
	seen := map[string]bool{}
	for _, o := range p.Options {
		l := strings.TrimSpace(o.Label)
		if l == "" {
			return "An option has an empty label."
		}
		if seen[strings.ToLower(l)] {
			return "Two options have the label " + strconv.Quote(l) + "; make them distinct."
		}
		seen[strings.ToLower(l)] = true
	}
	return ""
}

func execute(ctx context.Context, env tool.Env, p params, _ *meta) (tool.Result, *meta, error) {
	if why := check(p); why != "" {
		return tool.Errorf("%s", why), nil, nil
	}
	if env.Ask == nil {
		return tool.Errorf("No user is available to answer in this session, so the question was not asked. " +
			"Decide yourself and say what you chose and why, or end your turn with the question."), nil, nil
	}
	cs := choices(p)
	a, err := env.Ask(ctx, tool.Question{Text: p.Question, Choices: cs, FreeText: true})
	if ctx.Err() != nil {
		return tool.Errorf("Cancelled by the user before they answered."), nil, nil
	}
	if err != nil {
		return tool.Errorf("Could not ask the user (%v).", err), nil, nil
	}
	if err := card.ValidateResult(&card.QuestionResult{Choices: cs, Answer: a}); err != nil {
		return tool.Result{}, nil, errors.New("the answer was not one of the options")
	}
	return tool.Text(answerText(a)), &meta{Answer: a}, nil
}

// answerText is the answer as the model reads it.
func answerText(a card.Answer) string {
	switch {
	case a.None():
		return "The user chose none of the options and gave no answer (where they answered, their own words may not be possible). " +
			"Do not guess: end your turn and let them reply in their next message, or ask differently."
	case a.ID == "":
		return "The user answered in their own words:\n\n" + a.Text
	}
	return "The user chose: " + a.Text
}
