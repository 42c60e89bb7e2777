package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/rules"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// TestWebSearchIsLoggedAndReplayed: a provider's search is logged as a call
// whose card names the query and a result that lists the sources; the
// context holds it in place with the provider's blocks, live and after a
// reload alike, and no tool runs for it.
func TestWebSearchIsLoggedAndReplayed(t *testing.T) {
	e := newEnv(t)
	p := &probe{run: func(_ context.Context, name, id string) tool.Result { return tool.Text(name + " " + id) }}
	search := provider.Part{Type: provider.PartWebSearch, ID: "srvtoolu_1", Name: "web_search", Text: "shannon born",
		Signature: `anthropic-web-search:[{"type":"server_tool_use"},{"type":"web_search_tool_result"}]`,
		Sources:   []provider.Source{{URL: "https://en.wikipedia.org/wiki/Claude_Shannon", Title: "Claude Shannon"}, {URL: "https://ieee.org/s"}}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(text("Searching."), search, text("Found."), use("1", "look", `{"id":"a"}`)),
		reply(text("Done.")),
	}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Mode: ModeBypass})
	if _, err := a.Prompt(t.Context(), "when?"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user: text when?",
		`assistant: text Searching. | search srvtoolu_1 shannon born [` + search.Signature + `] | text Found. | use 1 look {"id":"a"}`,
		"user: result 1 ok: look a",
		"assistant: text Done.",
	}
	if got := describe(a.messages()); !slices.Equal(got, want) {
		t.Fatalf("live conversation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	reqs := fp.requests()
	if !reqs[0].WebSearch {
		t.Error("the search was not offered")
	}
	if err := checkConversation(reqs[1].Messages); err != nil {
		t.Error(err)
	}

	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var call, result *session.Record
	for i, r := range recs {
		if r.CallID == "srvtoolu_1" && r.Type == session.TypeToolCall {
			call = &recs[i]
		}
		if r.CallID == "srvtoolu_1" && r.Type == session.TypeToolResult {
			result = &recs[i]
		}
	}
	if call == nil || result == nil {
		t.Fatalf("no search call and result in %+v", recs)
	}
	if call.Name != "web_search" || call.Signature != search.Signature || string(call.Args) != `{"query":"shannon born"}` ||
		string(call.Preview) != `{"title":"Web search: shannon born","kind":"search"}` {
		t.Errorf("call record %+v", call)
	}
	if got, want := result.Result.TextOf(), "Claude Shannon\nhttps://en.wikipedia.org/wiki/Claude_Shannon\n\nhttps://ieee.org/s"; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	if c, ok := tool.NewRegistry(p.tools()...).PresentCall(call.Name, call.Args, call.Preview).(*card.GenericCall); !ok || c.Title != "Web search: shannon born" || c.ToolKind != card.ToolSearch {
		t.Errorf("call card %+v", c)
	}

	b := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools})
	for _, r := range recs {
		b.Fold(r)
	}
	if got := describe(b.messages()); !slices.Equal(got, want) {
		t.Fatalf("restored conversation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWebSearchOffer: the provider runs a search while it answers, so nobody
// can be asked about it: a rule that denies or asks keeps it from being
// offered, as does a turn that hides it.
func TestWebSearchOffer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  string
		e     rules.Effect
		offer bool
	}{
		{"no rule", "", rules.Allow, true},
		{"allow", "WebSearch", rules.Allow, true},
		{"ask", "WebSearch", rules.Ask, false},
		{"deny", "WebSearch", rules.Deny, false},
		{"deny by dsh's name", "web_search", rules.Deny, false},
		{"another tool denied", "WebFetch", rules.Deny, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var set *rules.Set
			if tc.rule != "" {
				r, err := rules.Parse(tc.rule, tc.e, "test", rules.Base{Root: e.dir, Cwd: e.dir})
				if err != nil {
					t.Fatal(err)
				}
				set = rules.NewSet(r)
			}
			fp := &fakeProvider{turns: []turnFunc{reply(text("ok"))}}
			a := New(Config{Provider: fp, Registry: tool.NewRegistry(), Log: e.log, Tools: e.tools, Rules: func() *rules.Set { return set }})
			if _, err := a.Prompt(t.Context(), "hi"); err != nil {
				t.Fatal(err)
			}
			if got := fp.requests()[0].WebSearch; got != tc.offer {
				t.Errorf("offered %v, want %v", got, tc.offer)
			}
		})
	}
}
