package host

import (
	"context"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// A call presenter that panics is contained for the permission request's card
// as for every other card: the user is asked with the generic card and the turn
// goes on (it once took the process down).
func TestPermissionCardOfAPanickingPresenter(t *testing.T) {
	type args struct{}
	boom := tool.New(tool.Spec[args, tool.NoMeta]{
		Name: "boom", Permission: tool.PermExecute,
		Execute: func(context.Context, tool.Env, args, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("ran"), nil, nil
		},
		PresentCall: func(args, *tool.NoMeta) card.Call { panic("call presenter bug") },
	})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "c1", "name": "boom", "args": {}}]},
		{"text": "done"}
	]}`)
	o := options(t, t.TempDir(), t.TempDir(), p)
	o.Mode, o.Ask, o.Tools = agent.ModeDefault, true, []tool.Tool{boom}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cards := make(chan card.Call, 1)
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			cards <- e.Permission.Request.Card
			e.Permission.Answer(agent.AllowOnce)
		}
	})
	defer sub.Close()
	stop, err := s.Prompt(context.Background(), "go")
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	g, ok := (<-cards).(*card.GenericCall)
	if !ok || g.Title != "boom" {
		t.Errorf("the permission card = %#v, want the generic card", g)
	}
	if r := resultText(t, s.Path(), "c1"); r.TextOf() != "ran" {
		t.Errorf("the call's result = %q, want it run", r.TextOf())
	}
}
