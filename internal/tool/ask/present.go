package ask

import (
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func presentCall(p params, _ *meta) card.Call {
	return &card.QuestionCall{Title: p.Question, Question: p.Question, Choices: choices(p), FreeText: true}
}

// presentResult is the question with its answer; nil (the raw result) when
// it was not answered or the answer does not fit the options.
func presentResult(p params, r tool.Result, m *meta) card.Result {
	if r.IsError || m == nil {
		return nil
	}
	res := &card.QuestionResult{Title: p.Question, Question: p.Question, Choices: choices(p), Answer: m.Answer}
	if card.ValidateResult(res) != nil {
		return nil
	}
	return res
}
