package todo

import (
	"fmt"
	"strings"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func planOf(items []item) []tool.PlanEntry {
	out := make([]tool.PlanEntry, len(items))
	for i, it := range items {
		out[i] = tool.PlanEntry{Content: it.Content, Status: it.Status, Priority: it.Priority}
	}
	return out
}

// checklist renders the list for the model and the card: [x] done, [~] in
// progress, [ ] pending, with the priority when there is one.
func checklist(entries []tool.PlanEntry) string {
	if len(entries) == 0 {
		return "The todo list is empty."
	}
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(box(e.Status))
		b.WriteByte(' ')
		b.WriteString(e.Content)
		if e.Priority != "" {
			fmt.Fprintf(&b, " (%s)", e.Priority)
		}
	}
	return b.String()
}

func box(status string) string {
	switch status {
	case "completed":
		return "[x]"
	case "in_progress":
		return "[~]"
	default:
		return "[ ]"
	}
}

func countStatus(entries []tool.PlanEntry, status string) int {
	n := 0
	for _, e := range entries {
		if e.Status == status {
			n++
		}
	}
	return n
}

func presentCall(p params, _ *meta) card.Call {
	noun := "items"
	if len(p.Todos) == 1 {
		noun = "item"
	}
	return &card.GenericCall{Title: fmt.Sprintf("Update todo list (%d %s)", len(p.Todos), noun)}
}

// presentResult shows the list from the arguments: the card is the checklist
// the model wrote, whatever notes its answer carried.
func presentResult(p params, r tool.Result, _ *meta) card.Result {
	if r.IsError {
		return nil
	}
	entries := planOf(p.Todos)
	return &card.GenericResult{
		Title:   fmt.Sprintf("%d of %d completed", countStatus(entries, "completed"), len(entries)),
		Content: []card.Content{card.Text(checklist(entries))},
	}
}
