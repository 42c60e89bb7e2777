package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/todo"
)

// answerer answers every question with its answer and rejects every
// permission, keeping what it was asked.
type answerer struct {
	mu        sync.Mutex
	questions []agent.QuestionRequest
	perms     []string
	answer    func(agent.QuestionRequest) card.Answer
}

func (a *answerer) handle(e Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e.Kind {
	case KindQuestion:
		a.questions = append(a.questions, e.Question.Request)
		e.Question.Answer(a.answer(e.Question.Request))
	case KindPermission:
		a.perms = append(a.perms, e.Permission.Request.Tool)
		e.Permission.Answer(agent.Reject)
	case KindRecord, KindDelta, KindModelRequest, KindCallStarted, KindUsage, KindStatus, KindChild, KindNotice:
	}
}

// A session in plan mode reads, presents its plan and, once the user approves
// it in accept-edits, edits without being asked in the same turn: the
// approval switched the mode (a logged mode record, before the plan's result)
// and made the steps the todo list (a plan record, and the todo tool's state).
// A reloaded session is in the same mode with the same list, and sends the
// live session's next request byte for byte.
func TestPlanApprovalSwitchesTheModeAndWritesTheTodoList(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("colour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}, {"id": "e0", "name": "edit", "args": {"path": "a.txt", "old_string": "colour", "new_string": "color"}}]},
		{"tool_calls": [{"id": "p1", "name": "plan", "args": {"plan": "# Spell color\n\nEdit a.txt.", "files": ["a.txt"], "steps": ["Edit a.txt", "Check it"]}}]},
		{"tool_calls": [{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "colour", "new_string": "color"}}]},
		{"text": "Done."}]}`)
	o := options(t, root, dir, p)
	o.Mode, o.Ask = agent.ModePlan, true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	ans := &answerer{answer: func(q agent.QuestionRequest) card.Answer {
		return card.Answer{ID: "accept-edits", Text: "Yes, and accept file edits"}
	}}
	sub := s.Subscribe(ans.handle)
	if _, err := s.Prompt(t.Context(), "plan, then fix the spelling"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	if len(ans.questions) != 1 || ans.questions[0].Tool != "plan" || ans.questions[0].Question.Text != "Implement this plan?" {
		t.Fatalf("questions %+v", ans.questions)
	}
	if c, ok := ans.questions[0].Card.(*card.PlanCall); !ok || c.Title != "Plan: Spell color" || !slices.Equal(c.Files, []string{"a.txt"}) {
		t.Errorf("the question's card is %#v, want the plan", ans.questions[0].Card)
	}
	if len(ans.perms) != 0 {
		t.Errorf("asked permission for %q; the plan mode refuses, accept-edits runs edits", ans.perms)
	}
	if r := resultText(t, s.Path(), "e0"); !r.IsError || !strings.Contains(r.TextOf(), "plan mode") {
		t.Errorf("the edit before the approval: %+v", r)
	}
	if r := resultText(t, s.Path(), "e1"); r.IsError {
		t.Errorf("the edit after the approval: %s", r.TextOf())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "color\n" {
		t.Errorf("a.txt = %q", b)
	}
	if s.Mode() != agent.ModeAcceptEdits || s.Status().Mode != agent.ModeAcceptEdits {
		t.Errorf("mode %s, status %s; want accept-edits", s.Mode(), s.Status().Mode)
	}
	steps := []tool.PlanEntry{{Content: "Edit a.txt", Status: "pending"}, {Content: "Check it", Status: "pending"}}
	if got := todo.Current(s.tools); !slices.Equal(got, steps) {
		t.Errorf("todo list %+v, want %+v", got, steps)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range recs {
		switch {
		case r.Type == session.TypeMode:
			order = append(order, "mode "+r.Mode)
		case r.Type == session.TypePlan:
			order = append(order, "plan")
			if !slices.Equal(r.Plan, steps) {
				t.Errorf("plan record %+v", r.Plan)
			}
		case r.Type == session.TypeToolResult && r.CallID == "p1":
			order = append(order, "result p1")
		}
	}
	if want := []string{"mode accept-edits", "plan", "result p1"}; !slices.Equal(order, want) {
		t.Errorf("records %q, want %q", order, want)
	}

	snapshot, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	p.Provider, _ = script.Parse([]byte(`{"turns": [{"text": "ok"}]}`))
	if _, err := s.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	liveReq := p.last(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(liveReq.System, "# Plan mode") {
		t.Error("the system prompt still says plan mode after the approval")
	}

	snapDir := t.TempDir()
	path := filepath.Join(snapDir, filepath.Base(s.Path()))
	if err := os.WriteFile(path, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	ps := scripted(t, `{"turns": [{"text": "ok"}]}`)
	so := options(t, root, snapDir, ps)
	so.Mode = agent.ModePlan // a loaded session keeps its own mode
	r, err := Load(so, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Mode() != agent.ModeAcceptEdits {
		t.Errorf("reloaded mode %s, want accept-edits", r.Mode())
	}
	if got := todo.Current(r.tools); !slices.Equal(got, steps) {
		t.Errorf("reloaded todo list %+v, want %+v", got, steps)
	}
	if _, err := r.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	if want, got := requestBytes(t, liveReq), requestBytes(t, ps.last(t)); got != want {
		t.Errorf("the reloaded session's request differs from the live one's:\nlive:     %s\nreloaded: %s", want, got)
	}
}

// Without anyone to ask (dsh run with stdin consumed, a test), ask_user says
// so to the model and nothing waits.
func TestQuestionWithoutAnyoneToAsk(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "q1", "name": "ask_user", "args": {"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}}]},
		{"text": "I chose A."}]}`)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(t.Context(), "ask me"); err != nil {
		t.Fatal(err)
	}
	if r := resultText(t, s.Path(), "q1"); !r.IsError || !strings.Contains(r.TextOf(), "No user is available") {
		t.Errorf("ask_user without a user: %+v", r)
	}
}
