package view

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

type args struct {
	Name string `json:"name"`
}

func registry() *tool.Registry {
	return tool.NewRegistry(tool.New(tool.Spec[args, tool.NoMeta]{
		Name: "greet",
		Execute: func(context.Context, tool.Env, args, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("hi"), nil, nil
		},
		PresentCall: func(a args, _ *tool.NoMeta) card.Call { return &card.GenericCall{Title: "Greet " + a.Name} },
		PresentResult: func(a args, r tool.Result, _ *tool.NoMeta) card.Result {
			return &card.GenericResult{Title: "Greeted " + a.Name, Content: r.Content}
		},
	}))
}

func TestResultsArePresentedWithTheirCallsArguments(t *testing.T) {
	p := NewPresenter(registry())
	res := tool.Text("hi")
	recs := []session.Record{
		{Type: session.TypeToolCall, CallID: "a", Name: "greet", Args: []byte(`{"name":"Ada"}`)},
		{Type: session.TypeToolCall, CallID: "b", Name: "greet", Args: []byte(`{"name":"Bo"}`)},
		{Type: session.TypeProgress, CallID: "a", Chunk: "…"},
		{Type: session.TypeToolResult, CallID: "b", Result: &res},
		{Type: session.TypeToolResult, CallID: "a", Result: &res},
	}
	var got []string
	var names []string
	for _, r := range recs {
		it := p.Present(r)
		names = append(names, it.Name)
		s := ""
		if c, ok := it.Call.(*card.GenericCall); ok {
			s = c.Title
		}
		if c, ok := it.Result.(*card.GenericResult); ok {
			s += " / " + c.Title
		}
		got = append(got, s)
	}
	want := []string{"Greet Ada", "Greet Bo", "Greet Ada", "Greet Bo / Greeted Bo", "Greet Ada / Greeted Ada"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if !slices.Equal(names, []string{"greet", "greet", "greet", "greet", "greet"}) {
		t.Errorf("names: %q", names)
	}
}

func TestOrphanResultHasNoCards(t *testing.T) {
	res := tool.Text("x")
	it := NewPresenter(registry()).Present(session.Record{Type: session.TypeToolResult, CallID: "ghost", Result: &res})
	if it.Call != nil || it.Result != nil {
		t.Errorf("a result without its call got cards: %#v", it)
	}
}

// A presenter that panics is contained here, for every consumer: the call shows
// as a generic card with its raw input, the result raw, and the error is told.
func TestPresenterPanicIsContained(t *testing.T) {
	boom := tool.New(tool.Spec[args, tool.NoMeta]{
		Name: "boom",
		Execute: func(context.Context, tool.Env, args, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("x"), nil, nil
		},
		PresentCall:   func(args, *tool.NoMeta) card.Call { panic("call presenter bug") },
		PresentResult: func(args, tool.Result, *tool.NoMeta) card.Result { panic("result presenter bug") },
	})
	p := NewPresenter(tool.NewRegistry(boom))
	var errs []string
	p.OnError = func(err error) { errs = append(errs, err.Error()) }
	res := tool.Text("x")
	call := p.Present(session.Record{Type: session.TypeToolCall, CallID: "a", Name: "boom", Args: []byte(`{"name":"Ada"}`)})
	g, ok := call.Call.(*card.GenericCall)
	if !ok || g.Title != "boom" || string(g.RawInput) != `{"name":"Ada"}` || call.Err == nil {
		t.Errorf("call item = %#v", call)
	}
	result := p.Present(session.Record{Type: session.TypeToolResult, CallID: "a", Result: &res})
	if result.Result != nil || result.Call != call.Call || result.Err == nil {
		t.Errorf("result item = %#v", result)
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "call presenter bug") || !strings.Contains(errs[1], "result presenter bug") {
		t.Errorf("errors told: %q", errs)
	}
}

// What the harness adds to the model context is shown where it happened, as a
// generic call and result: the summary of a compaction, a nested AGENTS.md.
func TestContextRecordsAreGenericCards(t *testing.T) {
	p := NewPresenter(registry())
	for _, tc := range []struct {
		rec         session.Record
		name, title string
		kind        card.ToolKind
	}{
		{session.Record{Type: session.TypeCompaction, Text: "the summary", Keep: 1}, "compact", "Compacted the conversation", "think"},
		{session.Record{Type: session.TypeCompaction, Text: "the summary", Focus: "tests"}, "compact", "Compacted the conversation (focus: tests)", "think"},
		{session.Record{Type: session.TypeInstructions, Path: "sub/AGENTS.md", Text: "the summary"}, "instructions", "Project instructions: sub/AGENTS.md", "read"},
	} {
		it := p.Present(tc.rec)
		c, ok := it.Call.(*card.GenericCall)
		if !ok || c.Title != tc.title || c.ToolKind != tc.kind || it.Name != tc.name || it.Err != nil {
			t.Errorf("%s: call %#v, name %q", tc.rec.Type, it.Call, it.Name)
			continue
		}
		r, ok := it.Result.(*card.GenericResult)
		if !ok || r.Title != tc.title || len(r.Content) != 1 || r.Content[0].Text != "the summary" {
			t.Errorf("%s: result %#v", tc.rec.Type, it.Result)
		}
	}
}

// A reply is a message, but /diff's, which holds a diff, is a diff card of
// the hunks that change: one changed line of forty is a hunk of seven rows.
func TestReplyWithADiffIsADiffCard(t *testing.T) {
	p := NewPresenter(registry())
	if it := p.Present(session.Record{Type: session.TypeReply, Text: "The mode is default."}); it.Call != nil || it.Result != nil {
		t.Errorf("a reply without a diff has cards: %#v", it)
	}
	var old, cur strings.Builder
	for i := range 40 {
		line := strings.Repeat("x", i) + "\n"
		old.WriteString(line)
		if i == 20 {
			line = "changed\n"
		}
		cur.WriteString(line)
	}
	o, n := old.String(), cur.String()
	it := p.Present(session.Record{Type: session.TypeReply, Text: "Prompt 1 changed a.txt",
		Diff: []session.RestoredFile{{Path: "a.txt", OldText: &o, NewText: &n, Added: 1, Removed: 1}}})
	c, ok := it.Call.(*card.DiffCall)
	r, rok := it.Result.(*card.DiffResult)
	if !ok || !rok || it.Name != "diff" || c.Title != "Prompt 1 changed a.txt" || r.Title != c.Title {
		t.Fatalf("/diff's reply: %#v", it)
	}
	if len(c.Diffs) != 1 || c.Diffs[0].OldText == nil || strings.Count(*c.Diffs[0].OldText, "\n") != 7 {
		t.Errorf("the diff is not one hunk of seven rows: %#v", c.Diffs)
	}
}

// A call the harness did not run shows the user's words; the model keeps its
// own text in the result.
func TestRefusedCallShowsTheUsersWords(t *testing.T) {
	p := NewPresenter(registry())
	p.Present(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "greet", Args: []byte(`{"name":"x"}`)})
	res := tool.Refused("The user rejected this call.", "Not run: you said no.")
	it := p.Present(session.Record{Type: session.TypeToolResult, CallID: "c1", Result: &res})
	c, ok := it.Result.(*card.GenericResult)
	if !ok || len(c.Content) != 1 || c.Content[0].Text != "Not run: you said no." {
		t.Errorf("the refused call's card: %#v", it.Result)
	}
	if res.TextOf() != "The user rejected this call." || !res.IsError {
		t.Errorf("the model reads %q (error %v)", res.TextOf(), res.IsError)
	}
}
