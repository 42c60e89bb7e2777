package ask

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

const question = `{"question":"Which database?","options":[{"label":"SQLite","description":"one file"},{"label":"Postgres"}]}`

func run(t *testing.T, args string, a card.Answer, asked *[]tool.Question) tool.Result {
	t.Helper()
	env := tool.Env{Ask: func(_ context.Context, q tool.Question) (card.Answer, error) {
		*asked = append(*asked, q)
		return a, nil
	}}
	r, err := tool.NewRegistry(Tool()).Run(t.Context(), env, "ask_user", []byte(args), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAnswers(t *testing.T) {
	for _, tt := range []struct {
		name string
		a    card.Answer
		want string
	}{
		{"choice", card.Answer{ID: "2", Text: "Postgres"}, "The user chose: Postgres"},
		{"own words", card.Answer{Text: "neither, use files"}, "in their own words:\n\nneither, use files"},
		{"none", card.Answer{}, "chose none of the options"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []tool.Question
			r := run(t, question, tt.a, &asked)
			if r.IsError || !strings.Contains(r.TextOf(), tt.want) {
				t.Errorf("result %+v, want %q", r, tt.want)
			}
			if len(asked) != 1 || asked[0].Text != "Which database?" || !asked[0].FreeText || len(asked[0].Choices) != 2 ||
				asked[0].Choices[0] != (card.Choice{ID: "1", Label: "SQLite", Description: "one file"}) {
				t.Errorf("asked %+v", asked)
			}
			res, ok := tool.NewRegistry(Tool()).PresentResult("ask_user", []byte(question), r).(*card.QuestionResult)
			if !ok || res.Answer != tt.a || res.Question != "Which database?" {
				t.Errorf("result card %+v", res)
			}
		})
	}
}

func TestBadQuestionsAreNotAsked(t *testing.T) {
	for _, args := range []string{
		`{"question":"Which?","options":[{"label":"one"}]}`,
		`{"question":"Which?","options":[{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"},{"label":"5"}]}`,
		`{"question":"Which?","options":[{"label":"Same"},{"label":"same"}]}`,
		`{"question":" ","options":[{"label":"a"},{"label":"b"}]}`,
	} {
		var asked []tool.Question
		if r := run(t, args, card.Answer{ID: "1", Text: "x"}, &asked); !r.IsError || len(asked) != 0 {
			t.Errorf("%s: %+v, asked %d times", args, r, len(asked))
		}
	}
}

func TestNoUser(t *testing.T) {
	r, err := tool.NewRegistry(Tool()).Run(t.Context(), tool.Env{}, "ask_user", []byte(question), nil)
	if err != nil || !r.IsError || !strings.Contains(r.TextOf(), "No user is available") {
		t.Errorf("got %+v, %v", r, err)
	}
}

// An answer the user could not have given (not one of the options) is a
// harness failure, not the model's business.
func TestAnswerNotOffered(t *testing.T) {
	env := tool.Env{Ask: func(context.Context, tool.Question) (card.Answer, error) { return card.Answer{ID: "9", Text: "?"}, nil }}
	if _, err := tool.NewRegistry(Tool()).Run(t.Context(), env, "ask_user", []byte(question), nil); err == nil {
		t.Error("an answer that was not offered was taken")
	}
}
