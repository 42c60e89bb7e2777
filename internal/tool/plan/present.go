package plan

import (
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// title names the plan by its first line, its Markdown heading marks dropped.
func title(plan string) string {
	for l := range strings.SplitSeq(plan, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		switch {
		case strings.HasPrefix(strings.ToLower(l), "plan"): // "# Plan", "# Plan: x": not "Plan: Plan"
			return l
		case l != "":
			return "Plan: " + l
		}
	}
	return "Plan"
}

func presentCall(p params, _ *meta) card.Call {
	return &card.PlanCall{Title: title(p.Plan), Plan: p.Plan, Files: p.Files, Steps: p.Steps}
}

// presentResult is the plan with the answer; nil (the raw result) when no
// question was answered.
func presentResult(p params, r tool.Result, m *meta) card.Result {
	if r.IsError || m == nil {
		return nil
	}
	return &card.PlanResult{Title: title(p.Plan), Plan: p.Plan, Files: p.Files, Steps: p.Steps,
		Choices: m.Choices, Answer: m.Answer, Mode: m.Mode}
}
