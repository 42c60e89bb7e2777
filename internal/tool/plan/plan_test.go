package plan

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/todo"
	"github.com/dsh-dev/dsh/internal/workspace"
)

const args = `{"plan":"# Rename colour\n\nEdit a.txt.","files":["a.txt"],"steps":["Edit a.txt"," ","Run the tests"]}`

type fixture struct {
	sess  *tool.Session
	reg   *tool.Registry
	asked []tool.Question
	modes []string
	plans [][]tool.PlanEntry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ws, err := workspace.New(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sess: tool.NewSession(t.Name(), ws), reg: tool.NewRegistry(Tool())}
	t.Cleanup(func() { _ = f.sess.Close() })
	return f
}

// run calls the tool with the user answering a, and folds the result as the
// agent does once it is logged.
func (f *fixture) run(t *testing.T, auto bool, a card.Answer, askErr error) tool.Result {
	t.Helper()
	return f.runIn(t, "plan", auto, a, askErr)
}

func (f *fixture) runIn(t *testing.T, mode string, auto bool, a card.Answer, askErr error) tool.Result {
	t.Helper()
	env := tool.Env{Session: f.sess, AutoMode: auto, Mode: mode,
		Plan:    func(p []tool.PlanEntry) { f.plans = append(f.plans, p) },
		SetMode: func(m string) error { f.modes = append(f.modes, m); return nil },
		Ask: func(_ context.Context, q tool.Question) (card.Answer, error) {
			f.asked = append(f.asked, q)
			return a, askErr
		}}
	r, err := f.reg.Run(t.Context(), env, "plan", []byte(args), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.reg.Fold(f.sess, "plan", []byte(args), r)
	return r
}

func ids(cs []card.Choice) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestApprovalSwitchesTheModeAndWritesTheTodoList(t *testing.T) {
	f := newFixture(t)
	r := f.run(t, false, card.Answer{ID: "accept-edits", Text: "Yes, and accept file edits"}, nil)
	if r.IsError || !strings.Contains(r.TextOf(), "accept-edits mode") || !strings.Contains(r.TextOf(), "todo list") {
		t.Fatalf("result: %+v", r)
	}
	if len(f.asked) != 1 || f.asked[0].Text != Question || !f.asked[0].FreeText {
		t.Fatalf("asked %+v", f.asked)
	}
	// Without the sandbox, auto is not offered.
	if got, want := ids(f.asked[0].Choices), []string{"default", "accept-edits", "keep"}; !slices.Equal(got, want) {
		t.Errorf("choices %q, want %q", got, want)
	}
	if !slices.Equal(f.modes, []string{"accept-edits"}) {
		t.Errorf("modes set: %q", f.modes)
	}
	want := []tool.PlanEntry{{Content: "Edit a.txt", Status: "pending"}, {Content: "Run the tests", Status: "pending"}}
	if len(f.plans) != 1 || !slices.Equal(f.plans[0], want) {
		t.Errorf("published %+v, want %+v", f.plans, want)
	}
	if got := todo.Current(f.sess); !slices.Equal(got, want) {
		t.Errorf("the todo list is %+v, want %+v", got, want)
	}
	res, ok := f.reg.PresentResult("plan", []byte(args), r).(*card.PlanResult)
	if !ok || res.Mode != "accept-edits" || res.Answer.ID != "accept-edits" || res.Title != "Plan: Rename colour" {
		t.Errorf("result card %+v", res)
	}
}

func TestAutoOfferedOnlyWithTheSandbox(t *testing.T) {
	f := newFixture(t)
	f.run(t, true, card.Answer{ID: "auto", Text: "Yes, in auto mode"}, nil)
	if got := ids(f.asked[0].Choices); !slices.Contains(got, "auto") {
		t.Errorf("choices %q lack auto", got)
	}
	if !slices.Equal(f.modes, []string{"auto"}) {
		t.Errorf("modes set: %q", f.modes)
	}
}

// Keeping planning, in words or not, and no answer leave the mode and the
// todo list alone.
func TestNotApproved(t *testing.T) {
	for _, tt := range []struct {
		name string
		a    card.Answer
		want string
	}{
		{"keep", card.Answer{ID: "keep", Text: "No, keep planning"}, "keep planning"},
		{"own words", card.Answer{Text: "use sed instead"}, "use sed instead"},
		{"no answer", card.Answer{}, "did not answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			r := f.run(t, false, tt.a, nil)
			if r.IsError || !strings.Contains(r.TextOf(), tt.want) {
				t.Errorf("result %+v, want it to say %q", r, tt.want)
			}
			if len(f.modes)+len(f.plans)+len(todo.Current(f.sess)) != 0 {
				t.Errorf("modes %q, plans %v, todo %v: want none", f.modes, f.plans, todo.Current(f.sess))
			}
			if res, ok := f.reg.PresentResult("plan", []byte(args), r).(*card.PlanResult); !ok || res.Mode != "" || res.Answer != tt.a {
				t.Errorf("result card %+v", res)
			}
		})
	}
}

func TestNoOneToAsk(t *testing.T) {
	f := newFixture(t)
	r, err := f.reg.Run(t.Context(), tool.Env{Session: f.sess, Mode: "plan"}, "plan", []byte(args), nil)
	if err != nil || !r.IsError || !strings.Contains(r.TextOf(), "No one can approve") {
		t.Errorf("got %+v, %v", r, err)
	}
	if f.reg.PresentResult("plan", []byte(args), r) != nil {
		t.Error("an unanswered plan has a result card; want the raw result")
	}
	r = f.run(t, false, card.Answer{}, errors.New("the client went away"))
	if !r.IsError || !strings.Contains(r.TextOf(), "the client went away") {
		t.Errorf("got %+v", r)
	}
}

// A logged meta whose mode does not follow its answer is not trusted.
func TestMetaValidates(t *testing.T) {
	cs := choices(false)
	for _, m := range []meta{
		{Choices: cs, Answer: card.Answer{ID: "keep"}, Mode: "default"},
		{Choices: cs, Answer: card.Answer{ID: "auto"}, Mode: "auto"}, // not offered
		{Choices: cs, Answer: card.Answer{ID: "default"}, Mode: "bypass"},
	} {
		if m.Validate() == nil {
			t.Errorf("%+v validated", m)
		}
	}
}

// Outside plan mode the plan tool asks nothing and switches nothing: one key
// widened a read-only session to accept-edits through it.
func TestOnlyInPlanMode(t *testing.T) {
	for _, mode := range []string{"read-only", "default", "accept-edits", "auto", "bypass", ""} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			r := f.runIn(t, mode, true, card.Answer{ID: "accept-edits"}, nil)
			if !r.IsError || !strings.Contains(r.TextOf(), "only in plan mode") {
				t.Errorf("result %+v, want a refusal", r)
			}
			if len(f.asked)+len(f.modes)+len(f.plans) != 0 {
				t.Errorf("asked %v, modes %q, plans %v: want none", f.asked, f.modes, f.plans)
			}
		})
	}
}

// A plan is titled by its first line, without its Markdown marks, and never
// "Plan: Plan".
func TestTitle(t *testing.T) {
	for _, tc := range []struct{ plan, want string }{
		{"# Add a cache\n\nSteps.", "Plan: Add a cache"},
		{"## Plan\n\n1. x", "Plan"},
		{"# Plan: the cache", "Plan: the cache"},
		{"\n\n", "Plan"},
	} {
		if got := title(tc.plan); got != tc.want {
			t.Errorf("title(%q) = %q, want %q", tc.plan, got, tc.want)
		}
	}
}
