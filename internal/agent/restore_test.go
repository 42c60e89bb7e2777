package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// A conversation rebuilt from the log file is the one the live agent holds: thinking
// signatures, interleaved parts, rejected and cancelled calls, a cancelled stream.
func TestRestoreRebuildsTheLiveConversation(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	p := &probe{run: func(ctx context.Context, name, id string) tool.Result {
		if id == "hang" {
			cancel()
			<-ctx.Done()
		}
		return tool.Text(name + " " + id + " done")
	}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(provider.Part{Type: provider.PartThinking, Text: "hmm", Signature: "c2lnbmF0dXJl"},
			text("Looking."), use("1", "look", `{"id":"a"}`), text("and"), use("2", "change", `{"id":"b"}`)),
		reply(provider.Part{Type: provider.PartThinking, Signature: "redacted-only"}, text("Done."), text("")),
	}}
	ask := &asker{answers: []Decision{Reject}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Permit: ask.permit, OutputCap: 8})
	if _, err := a.Prompt(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	fp.turns = []turnFunc{reply(use("3", "look", `{"id":"hang"}`), use("4", "shell", `{"command":"ls"}`))}
	if stop, err := a.Prompt(ctx, "two"); err != nil || stop != StopCancelled {
		t.Fatalf("Prompt two = %v, %v", stop, err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	fp.turns = []turnFunc{func(ctx context.Context, _ provider.Request) (*provider.Response, error) {
		cancel()
		return nil, ctx.Err()
	}}
	if stop, err := a.Prompt(ctx, "three"); err != nil || stop != StopCancelled {
		t.Fatalf("Prompt three = %v, %v", stop, err)
	}

	want := []string{
		"user: text one",
		// Text is logged before the calls, each of which is logged as it comes up.
		`assistant: thinking hmm [c2lnbmF0dXJl] | text Looking. | text and | use 1 look {"id":"a"} | use 2 change {"id":"b"}`,
		"user: result 1 ok: look\n\n… 3 characters omitted (the output was capped at 8) …\n\ndone | result 2 error: The \n\n… 20 characters omitted (the output was capped at 8) …\n\nall.",
		"assistant: thinking  [redacted-only] | text Done.",
		"user: text two",
		`assistant: use 3 look {"id":"hang"} | use 4 shell {"command":"ls"}`,
		"user: result 3 error: look\n\n… 29 characters omitted (the output was capped at 8) …\n\nser. | result 4 error: Canc\n\n… 14 characters omitted (the output was capped at 8) …\n\nser. | text three",
	}
	if got := describe(a.messages()); !slices.Equal(got, want) {
		t.Fatalf("live conversation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	b := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, OutputCap: 8})
	for _, r := range recs {
		b.Fold(r)
	}
	if got := describe(b.messages()); !slices.Equal(got, want) {
		t.Fatalf("restored conversation:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The restored agent continues with the restored context.
	fp.turns = []turnFunc{reply(text("ok"))}
	if _, err := b.Prompt(t.Context(), "four"); err != nil {
		t.Fatal(err)
	}
	reqs := fp.requests()
	sent := reqs[len(reqs)-1].Messages
	if err := checkConversation(sent); err != nil {
		t.Error(err)
	}
	if got := describe(sent); !slices.Equal(got[:len(want)-1], want[:len(want)-1]) || !strings.HasSuffix(got[len(got)-1], "| text three | text four") {
		t.Errorf("request after restore:\n%s", strings.Join(got, "\n"))
	}
}

// A log cut off by a crash, with results out of order and a stray result, still
// gives a conversation the APIs accept.
func TestMessagesRepairsDamagedLogs(t *testing.T) {
	res := func(id, s string, isErr bool) session.Record {
		r := tool.Text(s)
		r.IsError = isErr
		return session.Record{Type: session.TypeToolResult, CallID: id, Result: &r}
	}
	call := func(id, name string) session.Record {
		return session.Record{Type: session.TypeToolCall, CallID: id, Name: name, Args: jsontext.Value(`{"id":"` + id + `"}`)}
	}
	recs := []session.Record{
		{Type: session.TypeHeader, Version: 1, SessionID: "x"},
		{Type: session.TypeUser, Text: "u1"},
		{Type: session.TypeThinking, Text: "t", Signature: "s"},
		call("A", "look"),
		{Type: session.TypeAssistant, Text: "between"},
		call("B", "change"),
		{Type: session.TypeProgress, CallID: "B", Chunk: "partial"},
		res("B", "b done", false),
		res("X", "stray", false),
		{Type: session.TypePlan, Plan: []tool.PlanEntry{{Content: "x", Status: "pending"}}},
		res("A", "a failed", true),
		{Type: session.TypeAssistant, Text: "after"},
		{Type: session.TypeTurnEnd, StopReason: "end_turn"},
		{Type: session.TypeUser, Text: "u2"},
		call("C", "look"),
		res("C", "c done", false),
		call("D", "look"),
		{Type: session.TypeUser, Text: "u3"}, // the process died while D ran
		{Type: session.TypeToolCall, CallID: "E", Name: "look"},
	}
	want := []string{
		"user: text u1",
		`assistant: thinking t [s] | use A look {"id":"A"} | text between | use B change {"id":"B"}`,
		"user: result A error: a failed | result B ok: b done",
		"assistant: text after",
		"user: text u2",
		`assistant: use C look {"id":"C"}`,
		"user: result C ok: c done",
		`assistant: use D look {"id":"D"}`,
		"user: result D error: " + msgInterrupted + " | text u3",
		"assistant: use E look {}",
		"user: result E error: " + msgInterrupted,
	}
	b := builder{outputCap: DefaultOutputCap}
	for _, r := range recs {
		b.fold(r)
	}
	msgs := b.messages()
	if got := describe(msgs); !slices.Equal(got, want) {
		t.Fatalf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := checkConversation(msgs); err != nil {
		t.Error(err)
	}
}

// The context holds a bounded amount of tool output: the oldest is elided first,
// the same way on every fold, and the newest always stays whole.
func TestOutputBudgetElidesTheOldest(t *testing.T) {
	b := builder{outputCap: 1 << 30}
	big := strings.Repeat("x", outputBudget/4) // four and a bit do not fit
	for i := range 5 {
		id := fmt.Sprint(i)
		res := tool.Text(big + id)
		for _, r := range []session.Record{
			{Type: session.TypeUser, Text: "go " + id},
			{Type: session.TypeToolCall, CallID: id, Name: "look"},
			{Type: session.TypeToolResult, CallID: id, Result: &res},
			{Type: session.TypeTurnEnd},
		} {
			b.fold(r)
		}
	}
	var kept, elided []string
	for _, m := range b.messages() {
		for _, p := range m.Parts {
			if p.Type != provider.PartToolResult {
				continue
			}
			if text := p.Content[0].Text; text == msgElided {
				elided = append(elided, p.ID)
			} else {
				kept = append(kept, p.ID)
			}
		}
	}
	if !slices.Equal(elided, []string{"0", "1"}) || !slices.Equal(kept, []string{"2", "3", "4"}) {
		t.Errorf("elided %q, kept %q", elided, kept)
	}
	if b.outputBytes > outputBudget {
		t.Errorf("holds %d bytes of output, budget %d", b.outputBytes, outputBudget)
	}
}

// The builder keeps its estimate as records fold; at every step it is what a
// walk of the conversation messages() hands out gives (no less, with calls
// open): through open calls and their interrupted answers, pending
// instructions, elided outputs and compactions.
func TestEstimateKeptEqualsWalk(t *testing.T) {
	b := builder{outputCap: 1 << 30}
	big := tool.Text(strings.Repeat("y", outputBudget/3))
	small := tool.Text("ok")
	var recs []session.Record
	for i := range 6 {
		id := fmt.Sprint(i)
		recs = append(recs,
			session.Record{Type: session.TypeUser, Text: "go " + id},
			session.Record{Type: session.TypeThinking, Text: "hmm", Signature: "sig"},
			session.Record{Type: session.TypeToolCall, CallID: id + "a", Name: "look", Args: []byte(`{"x":1}`)},
			session.Record{Type: session.TypeToolCall, CallID: id + "b", Name: "look", Continues: true},
			session.Record{Type: session.TypeInstructions, Path: "sub/AGENTS.md", Text: "SUB " + id},
			session.Record{Type: session.TypeToolResult, CallID: id + "a", Result: &big},
			session.Record{Type: session.TypeAssistant, Text: "done " + id}, // b is interrupted
			session.Record{Type: session.TypeToolCall, CallID: id + "c", Name: "look"},
			session.Record{Type: session.TypeToolResult, CallID: id + "c", Result: &small},
			session.Record{Type: session.TypeTurnEnd},
		)
		if i == 3 {
			recs = append(recs, session.Record{Type: session.TypeCompaction, Text: "S", Keep: 1})
		}
	}
	for i, r := range recs {
		b.fold(r)
		var walk int64
		for _, m := range b.messages() {
			walk += models.EstimateMessage(m)
		}
		// With calls open, the elision their answers would cause is not
		// counted: the estimate errs high.
		if got := b.estimate(); got != walk && (len(b.open) == 0 || got < walk) {
			t.Fatalf("after record %d (%s): estimate %d, a walk of the messages %d", i, r.Type, got, walk)
		}
	}
	if b.est == 0 {
		t.Fatal("nothing was estimated")
	}
}
