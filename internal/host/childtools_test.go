package host

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
)

// A subagent whose file names no tools has all the parent's, todo_write and
// ask_user included: its list is its own, and its question reaches the
// parent's user, titled with the agent and linked to the task call, and the
// answer comes back to the subagent's model.
func TestSubagentAsksAndKeepsTodos(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{".claude/agents/helper.md": "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "x", "prompt": "TASK-H: plan and ask", "subagent_type": "helper"}}]},
		{"match": "TASK-H", "tool_calls": [
			{"id": "h1", "name": "todo_write", "args": {"todos": [{"content": "look", "status": "in_progress"}]}},
			{"id": "h2", "name": "ask_user", "args": {"question": "Which colour?", "options": [{"label": "Red"}, {"label": "Blue"}]}}]},
		{"match": "TASK-H", "text": "Done."},
		{"text": "ok"}]}`)
	o := options(t, root, dir, p)
	o.Mode, o.Ask = agent.ModeDefault, true
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	var asked []*Question
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindQuestion {
			asked = append(asked, e.Question)
			e.Question.Answer(card.Answer{ID: e.Question.Request.Question.Choices[1].ID, Text: "Blue"})
		}
	})
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 {
		t.Fatalf("%d questions reached the parent, want 1", len(asked))
	}
	q := asked[0]
	if q.Parent != "t1" || q.Child == "" || q.Request.CallID != "h2" {
		t.Errorf("question parent %q child %q call %q", q.Parent, q.Child, q.Request.CallID)
	}
	if c, ok := q.Request.Card.(*card.QuestionCall); !ok || !strings.HasPrefix(c.Title, "helper: ") {
		t.Errorf("question card %#v, want one titled with the agent", q.Request.Card)
	}
	child := filepath.Join(dir, q.Child+".jsonl")
	for call, want := range map[string]string{"h1": "", "h2": "Blue"} {
		r := resultText(t, child, call)
		if r.IsError || !strings.Contains(r.TextOf(), want) {
			t.Errorf("%s in the subagent: %+v", call, r)
		}
	}
}
