package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
	"github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/tool/todo"
)

func TestToolLoopIsLogged(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &probe{}
	reg := tool.NewRegistry(append([]tool.Tool{fs.Read()}, p.tools()...)...)
	fp := &fakeProvider{turns: []turnFunc{
		reply(provider.Part{Type: provider.PartThinking, Text: "look first", Signature: "sig-1"}, text("Reading."), use("c1", "read", `{"path":"a.txt"}`)),
		reply(text("Changing."), use("c2", "change", `{"id":"x"}`), use("c3", "look", `{"id":"y"}`)),
		reply(text("Done.")),
	}}
	var deltas []string
	a := New(Config{Provider: fp, Registry: reg, Log: e.log, Tools: e.tools, Mode: ModeBypass,
		OnDelta: func(d provider.Delta) { deltas = append(deltas, d.Text) }})

	stop, err := a.Prompt(t.Context(), "please fix")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	want := []string{
		"user please fix",
		"thinking look first [sig-1]",
		"assistant Reading.",
		`call c1 read {"path":"a.txt"}`,
		"result c1 ok: <path>" + filepath.Join(e.dir, "a.txt") + "</path>",
		"assistant Changing.",
		`call c2 change {"id":"x"}`,
		"result c2 ok: change x done",
		`call c3 look {"id":"y"}`,
		"result c3 ok: look y done",
		"assistant Done.",
		"end end_turn",
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(recs); !slices.Equal(got, want) {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(resultOf(t, recs, "c1").TextOf(), "1: hello") {
		t.Errorf("read result lacks the file: %q", resultOf(t, recs, "c1").TextOf())
	}
	end := recs[len(recs)-1]
	if end.Usage == nil || end.Usage.InputTokens != 300 || end.Usage.OutputTokens != 30 {
		t.Errorf("usage = %+v, want the sum of three responses (300 in, 30 out)", end.Usage)
	}
	if !slices.Equal(deltas, []string{"Reading.", "Changing.", "Done."}) {
		t.Errorf("deltas = %q", deltas)
	}

	reqs := fp.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var names []string
	for _, d := range reqs[0].Tools {
		names = append(names, d.Name)
		if d.Description == "" || !d.Schema.IsValid() {
			t.Errorf("tool def %s lacks a description or schema", d.Name)
		}
	}
	if !slices.Equal(names, []string{"read", "look", "change", "tweak", "shell"}) {
		t.Errorf("tool defs = %v", names)
	}
	if reqs[0].Model != "" || reqs[0].MaxTokens != DefaultMaxTokens {
		t.Errorf("request model/max tokens = %q/%d", reqs[0].Model, reqs[0].MaxTokens)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != provider.RoleUser || len(last.Parts) != 1 || last.Parts[0].Type != provider.PartToolResult ||
		last.Parts[0].ID != "c1" || !strings.Contains(last.Parts[0].Content[0].Text, "2: world") {
		t.Errorf("second request does not end with c1's result: %+v", last)
	}
	for i, r := range reqs {
		if err := checkConversation(r.Messages); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
}

// checkConversation checks what the model APIs require of a conversation: it
// starts with the user, roles alternate, and every assistant tool_use is answered,
// in order, by the tool_results that open the next user message.
func checkConversation(ms []provider.Message) error {
	for i, m := range ms {
		if want := []provider.Role{provider.RoleUser, provider.RoleAssistant}[i%2]; m.Role != want {
			return fmt.Errorf("message %d is %s, want %s", i, m.Role, want)
		}
		var ids []string
		for _, p := range m.Parts {
			if p.Type == provider.PartToolUse {
				ids = append(ids, p.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if i+1 >= len(ms) {
			return fmt.Errorf("message %d: tool calls %v are unanswered", i, ids)
		}
		next := ms[i+1].Parts
		if len(next) < len(ids) {
			return fmt.Errorf("message %d: %d results for %d calls", i+1, len(next), len(ids))
		}
		for k, id := range ids {
			if next[k].Type != provider.PartToolResult || next[k].ID != id {
				return fmt.Errorf("message %d part %d: want the result of %s, got %+v", i+1, k, id, next[k])
			}
		}
	}
	return nil
}

func TestReadOnlyCallsOverlapMutatingCallsRunAlone(t *testing.T) {
	e := newEnv(t)
	var (
		mu     sync.Mutex
		events []string
	)
	note := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	// Both looks must be inside their Execute at once: each waits for the other.
	bIn, cIn, cOut := make(chan struct{}), make(chan struct{}), make(chan struct{})
	await := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(10 * time.Second): // a deadlock guard, not a timing assertion
			return false
		}
	}
	p := &probe{run: func(_ context.Context, name, id string) tool.Result {
		note("start " + id)
		defer note("end " + id)
		switch id {
		case "b":
			close(bIn)
			if !await(cIn) || !await(cOut) {
				return tool.Errorf("look b never overlapped look c")
			}
		case "c":
			close(cIn)
			defer close(cOut)
			if !await(bIn) {
				return tool.Errorf("look c never overlapped look b")
			}
		}
		return tool.Text(name + " " + id + " done")
	}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("a", "change", `{"id":"a"}`), use("b", "look", `{"id":"b"}`), use("c", "look", `{"id":"c"}`),
			use("d", "change", `{"id":"d"}`), use("e", "shell", `{"command":"e"}`)),
		reply(text("ok")),
	}}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeBypass, nil)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(events) != 10 {
		t.Fatalf("events = %v", events)
	}
	if !slices.Equal(events[:2], []string{"start a", "end a"}) ||
		!slices.Equal(events[6:], []string{"start d", "end d", "start e", "end e"}) {
		t.Errorf("mutating calls did not run alone and in order: %v", events)
	}
	// c finishes first, yet the results are logged in call order.
	want := []string{"result a ok: change a done", "result b ok: look b done", "result c ok: look c done",
		"result d ok: change d done", "result e ok: shell e done"}
	var got []string
	for _, s := range summary(e.records(t)) {
		if strings.HasPrefix(s, "result ") {
			got = append(got, s)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("results = %q\nwant %q", got, want)
	}
}

func TestModes(t *testing.T) {
	tests := []struct {
		mode  Mode
		asked []string
		// the status of look, change and shell
		results [3]string
	}{
		{ModeDefault, []string{"change", "e"}, [3]string{"ok", "ok", "ok"}},
		{ModeAcceptEdits, []string{"e"}, [3]string{"ok", "ok", "ok"}},
		{ModeBypass, nil, [3]string{"ok", "ok", "ok"}},
		{ModeReadOnly, nil, [3]string{"ok", "read-only", "read-only"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			e := newEnv(t)
			p := &probe{}
			fp := &fakeProvider{turns: []turnFunc{
				reply(use("l", "look", `{"id":"l"}`), use("c", "change", `{"id":"c"}`), use("s", "shell", `{"command":"e"}`)),
				reply(text("ok")),
			}}
			ask := &asker{}
			a := e.agent(fp, tool.NewRegistry(p.tools()...), tt.mode, ask.permit)
			if _, err := a.Prompt(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ask.asked, tt.asked) {
				t.Errorf("asked about %v, want %v", ask.asked, tt.asked)
			}
			recs := e.records(t)
			for i, id := range []string{"l", "c", "s"} {
				r := resultOf(t, recs, id)
				got := "ok"
				if r.IsError {
					got = r.TextOf()
					if strings.Contains(got, "read-only mode") {
						got = "read-only"
					}
				}
				if got != tt.results[i] {
					t.Errorf("%s: %q, want %q", id, got, tt.results[i])
				}
			}
		})
	}
}

func TestModeChangesApplyToTheNextCall(t *testing.T) {
	e := newEnv(t)
	var a *Agent
	p := &probe{run: func(_ context.Context, name, id string) tool.Result {
		a.SetMode(ModeReadOnly) // as a user would from the UI while the turn runs
		return tool.Text("done")
	}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("1", "change", `{"id":"1"}`), use("2", "change", `{"id":"2"}`)),
		reply(text("ok")),
	}}
	a = e.agent(fp, tool.NewRegistry(p.tools()...), ModeBypass, nil)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t)
	if r := resultOf(t, recs, "1"); r.IsError {
		t.Errorf("first call: %q", r.TextOf())
	}
	if r := resultOf(t, recs, "2"); !r.IsError || !strings.Contains(r.TextOf(), "read-only") {
		t.Errorf("second call after the switch to read-only: %+v", r)
	}
	if a.Mode() != ModeReadOnly {
		t.Errorf("Mode() = %s", a.Mode())
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "Default", "yolo", "read_only"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) succeeded", bad)
		}
	}
}

func TestAlwaysAllowPerTool(t *testing.T) {
	e := newEnv(t)
	p := &probe{}
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("1", "change", `{"id":"1"}`)),
		reply(use("2", "change", `{"id":"2"}`), use("3", "tweak", `{"id":"3"}`)),
		reply(use("4", "tweak", `{"id":"4"}`), use("5", "change", `{"id":"5"}`)),
		reply(text("ok")),
	}}
	ask := &asker{answers: []Decision{AllowAlways, AllowOnce, AllowOnce}}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeDefault, ask.permit)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"change", "tweak", "tweak"}; !slices.Equal(ask.asked, want) {
		t.Errorf("asked %v, want %v", ask.asked, want)
	}
	// Remembered for the agent (the session), not the turn.
	fp.turns = []turnFunc{reply(use("6", "change", `{"id":"6"}`)), reply(text("ok"))}
	if _, err := a.Prompt(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if len(ask.asked) != 3 {
		t.Errorf("asked again in the next turn: %v", ask.asked)
	}
}

func TestAlwaysAllowPerCommandPrefix(t *testing.T) {
	e := newEnv(t)
	p := &probe{}
	cmds := []struct {
		cmd    string
		answer Decision // used only when asked
	}{
		{"make build", AllowAlways},
		{"make build -j4", AllowOnce},         // covered by "make build"
		{"make install", AllowOnce},           // another make target: asked
		{"npm test", AllowAlways},             // a second prefix
		{"npm test && make build", AllowOnce}, // both allowed
		{"npm test; rm -rf build", AllowOnce}, // rm hides behind npm test: asked
		{"make $(whoami)", AllowAlways},       // a command substitution cannot be remembered
		{"make $(whoami)", AllowOnce},         // so it is asked again
		{"FOO=1 make build", AllowAlways},     // an assignment prefix cannot be remembered
		{"FOO=1 make build", AllowOnce},       // asked again
		{`bash -c "rm -rf /"`, AllowAlways},   // a wrapper cannot be remembered
		{`bash -c "rm -rf /"`, AllowOnce},     // asked again
		{"git status", AllowOnce},             // known safe: never asked
		{"ls -la | wc -l", AllowOnce},         // known safe: never asked
		{"make build > out.txt", AllowOnce},   // a redirection: asked
	}
	var parts []provider.Part
	var answers []Decision
	var wantAsked []string
	for i, c := range cmds {
		parts = append(parts, use(string(rune('a'+i)), "shell", `{"command":`+quote(c.cmd)+`}`))
	}
	for _, i := range []int{0, 2, 3, 5, 6, 7, 8, 9, 10, 11, 14} {
		wantAsked = append(wantAsked, cmds[i].cmd)
		answers = append(answers, cmds[i].answer)
	}
	fp := &fakeProvider{turns: []turnFunc{reply(parts...), reply(text("ok"))}}
	ask := &asker{answers: answers}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeAcceptEdits, ask.permit)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ask.asked, wantAsked) {
		t.Errorf("asked:\n%s\nwant:\n%s", strings.Join(ask.asked, "\n"), strings.Join(wantAsked, "\n"))
	}
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestRejectedCallIsNotRunAndTheModelContinues(t *testing.T) {
	e := newEnv(t)
	ran := 0
	p := &probe{run: func(context.Context, string, string) tool.Result { ran++; return tool.Text("ran") }}
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("1", "change", `{"id":"1"}`)),
		reply(text("Understood, I will not change it.")),
	}}
	ask := &asker{answers: []Decision{Reject}}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeDefault, ask.permit)
	stop, err := a.Prompt(t.Context(), "go")
	if err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	if ran != 0 {
		t.Errorf("the rejected call ran")
	}
	want := []string{"user go", `call 1 change {"id":"1"}`, "result 1 error: The user rejected this call.",
		"assistant Understood, I will not change it.", "end end_turn"}
	if got := summary(e.records(t)); !slices.Equal(got, want) {
		t.Errorf("log = %q", got)
	}
	res := fp.requests()[1].Messages[2].Parts[0]
	if !res.IsError || res.Content[0].Text != "The user rejected this call." {
		t.Errorf("the model got %+v", res)
	}
}

func TestNobodyToAskIsAnErrorResult(t *testing.T) {
	e := newEnv(t)
	fp := &fakeProvider{turns: []turnFunc{reply(use("1", "shell", `{"command":"make build"}`)), reply(text("ok"))}}
	a := e.agent(fp, tool.NewRegistry((&probe{}).tools()...), ModeDefault, nil)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if r := resultOf(t, e.records(t), "1"); !r.IsError || !strings.Contains(r.TextOf(), "no one to ask") {
		t.Errorf("result = %+v", r)
	}
}

func TestPermitterCancelCancelsTheTurn(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	permit := func(ctx context.Context, _ PermissionRequest) (Decision, error) {
		cancel() // the user pressed Ctrl-C at the prompt
		<-ctx.Done()
		return Reject, ctx.Err()
	}
	fp := &fakeProvider{turns: []turnFunc{reply(use("1", "change", `{"id":"1"}`), use("2", "look", `{"id":"2"}`))}}
	a := e.agent(fp, tool.NewRegistry((&probe{}).tools()...), ModeDefault, permit)
	stop, err := a.Prompt(ctx, "go")
	if err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	want := []string{"user go", `call 1 change {"id":"1"}`, "result 1 error: Cancelled by the user.",
		`call 2 look {"id":"2"}`, "result 2 error: Cancelled by the user.", "end cancelled"}
	if got := summary(e.records(t)); !slices.Equal(got, want) {
		t.Errorf("log = %q", got)
	}
}

func TestProviderErrorEndsTheTurn(t *testing.T) {
	e := newEnv(t)
	boom := errors.New("HTTP 500: overloaded")
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("1", "look", `{"id":"1"}`)),
		func(context.Context, provider.Request) (*provider.Response, error) { return nil, boom },
	}}
	a := e.agent(fp, tool.NewRegistry((&probe{}).tools()...), ModeBypass, nil)
	stop, err := a.Prompt(t.Context(), "go")
	if stop != StopError || !errors.Is(err, boom) {
		t.Fatalf("Prompt = %v, %v; want error wrapping %v", stop, err, boom)
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user go", `call 1 look {"id":"1"}`, "result 1 ok: look 1 done", "end error (model fake: HTTP 500: overloaded)"}
	if got := summary(recs); !slices.Equal(got, want) {
		t.Errorf("log = %q", got)
	}
	if u := recs[len(recs)-1].Usage; u == nil || u.InputTokens != 100 {
		t.Errorf("usage of the turn so far = %+v", u)
	}
}

func TestMaxTurns(t *testing.T) {
	e := newEnv(t)
	loop := reply(use("x", "look", `{"id":"x"}`))
	fp := &fakeProvider{turns: []turnFunc{loop, loop, loop, loop}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools, MaxTurns: 2})
	stop, err := a.Prompt(t.Context(), "go")
	if err != nil || stop != StopMaxTurns {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	if n := len(fp.requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	recs := e.records(t)
	if last := recs[len(recs)-1]; last.Type != session.TypeTurnEnd || last.StopReason != "max_turns" {
		t.Errorf("last record = %+v", last)
	}
	// The next prompt follows the last results in the same user message.
	fp.turns = []turnFunc{reply(text("ok"))}
	if _, err := a.Prompt(t.Context(), "continue"); err != nil {
		t.Fatal(err)
	}
	reqs := fp.requests()
	if err := checkConversation(reqs[2].Messages); err != nil {
		t.Error(err)
	}
}

func TestInvalidArgumentsAreRefusedAndLogged(t *testing.T) {
	e := newEnv(t)
	ran := false
	p := &probe{run: func(context.Context, string, string) tool.Result { ran = true; return tool.Text("ran") }}
	fp := &fakeProvider{turns: []turnFunc{reply(use("1", "look", `{"id": "x"`)), reply(text("ok"))}}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeBypass, nil)
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user go", `call 1 look {"invalid_arguments":"{\"id\": \"x\""}`}
	if got := summary(recs); !slices.Equal(got[:2], want) {
		t.Errorf("log = %q", got)
	}
	if r := resultOf(t, recs, "1"); !r.IsError || !strings.Contains(r.TextOf(), "invalid_arguments") || ran {
		t.Errorf("result = %+v, ran = %v", r, ran)
	}
}

func TestBusy(t *testing.T) {
	e := newEnv(t)
	started, release := make(chan struct{}), make(chan struct{})
	fp := &fakeProvider{turns: []turnFunc{func(context.Context, provider.Request) (*provider.Response, error) {
		close(started)
		<-release
		return reply(text("ok"))(context.Background(), provider.Request{})
	}}}
	a := e.agent(fp, tool.NewRegistry(), ModeBypass, nil)
	done := make(chan error)
	go func() { _, err := a.Prompt(t.Context(), "one"); done <- err }()
	<-started
	if _, err := a.Prompt(t.Context(), "two"); !errors.Is(err, ErrBusy) {
		t.Errorf("second Prompt = %v, want ErrBusy", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestOutputIsCappedForTheModelNotTheLog(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("é", 500) + "MIDDLE" + strings.Repeat("z", 500)
	p := &probe{run: func(context.Context, string, string) tool.Result { return tool.Text(long) }}
	fp := &fakeProvider{turns: []turnFunc{reply(use("1", "look", `{"id":"1"}`)), reply(text("ok"))}}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, OutputCap: 100})
	if _, err := a.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if got := resultOf(t, e.records(t), "1").TextOf(); got != long {
		t.Errorf("the log lost output: %d bytes, want %d", len(got), len(long))
	}
	got := fp.requests()[1].Messages[2].Parts[0].Content[0].Text
	if !strings.HasPrefix(got, strings.Repeat("é", 50)+"\n") || !strings.HasSuffix(got, "\n"+strings.Repeat("z", 50)) ||
		strings.Contains(got, "MIDDLE") || !strings.Contains(got, "906 characters omitted") {
		t.Errorf("model got %q", got)
	}
}

// The real tools, driven by the script provider, across several model turns.
func TestScriptedLoopWithRealTools(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("colour\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry(append([]tool.Tool{fs.Read(), fs.Edit(), fs.Write(), todo.Tool()}, bash.Tools()...)...)
	fp := scripted(t, `{"turns": [
		{"thinking": "Plan first.", "tool_calls": [
			{"id": "t1", "name": "todo_write", "args": {"todos": [{"content": "Fix the spelling", "status": "in_progress"}]}},
			{"id": "r1", "name": "read", "args": {"path": "a.txt"}}]},
		{"text": "Fixing it.", "tool_calls": [
			{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "colour", "new_string": "color"}},
			{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "new\n"}}]},
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "cat a.txt b.txt"}}]},
		{"text": "Done."}]}`)
	a := e.agent(fp, reg, ModeBypass, nil)
	if stop, err := a.Prompt(t.Context(), "fix a.txt"); err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range summary(recs) {
		if strings.HasPrefix(s, "result ") {
			s, _, _ = strings.Cut(s, ":") // the tools' own wording is theirs to test
		}
		got = append(got, s)
	}
	want := []string{
		"user fix a.txt",
		"thinking Plan first. []",
		`call t1 todo_write {"todos":[{"content":"Fix the spelling","status":"in_progress"}]}`,
		"plan 1",
		"result t1 ok",
		`call r1 read {"path":"a.txt"}`,
		"result r1 ok",
		"assistant Fixing it.",
		`call e1 edit {"path":"a.txt","old_string":"colour","new_string":"color"}`,
		"result e1 ok",
		`call w1 write {"path":"b.txt","content":"new\n"}`,
		"result w1 ok",
		`call b1 bash {"command":"cat a.txt b.txt"}`,
		"result b1 ok",
		"assistant Done.",
		"end end_turn",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out := resultOf(t, recs, "b1").TextOf(); !strings.Contains(out, "color\nnew\n") {
		t.Errorf("bash saw %q", out)
	}
	reqs := fp.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if err := checkConversation(r.Messages); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
}

// TestOnCallStart: a UI hears when each permitted call begins — after its
// tool_call record and the permission, before its result — and never for a
// rejected call.
func TestOnCallStart(t *testing.T) {
	e := newEnv(t)
	var events []string
	p := &probe{run: func(context.Context, string, string) tool.Result {
		events = append(events, "run")
		return tool.Text("ran")
	}}
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("1", "change", `{"id":"1"}`), use("2", "change", `{"id":"2"}`)),
		reply(text("done")),
	}}
	ask := &asker{answers: []Decision{AllowOnce, Reject}}
	c := Config{Provider: fp, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools,
		Mode: ModeDefault, Permit: func(ctx context.Context, req PermissionRequest) (Decision, error) {
			events = append(events, "ask "+req.CallID)
			return ask.permit(ctx, req)
		}}
	c.OnCallStart = func(id string) {
		logged := false
		for _, r := range e.records(t) {
			logged = logged || (r.Type == session.TypeToolCall && r.CallID == id)
		}
		if !logged {
			t.Errorf("call %s started before its tool_call record", id)
		}
		events = append(events, "start "+id)
	}
	if _, err := New(c).Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ask 1", "start 1", "run", "ask 2"}; !slices.Equal(events, want) {
		t.Errorf("events = %q, want %q", events, want)
	}
}

// The auto mode runs commands and edits unasked, and exists only where commands
// run in the sandbox: elsewhere it is refused, and a logged auto falls back to
// asking.
func TestAutoModeNeedsTheSandbox(t *testing.T) {
	e := newEnv(t)
	p := &probe{}
	ask := &asker{}
	reply2 := func() *fakeProvider {
		return &fakeProvider{turns: []turnFunc{reply(use("1", "shell", `{"command":"make build"}`), use("2", "change", `{"id":"x"}`)), reply(text("ok"))}}
	}
	unsandboxed := New(Config{Provider: reply2(), Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Mode: ModeAuto, Permit: ask.permit})
	if unsandboxed.Mode() != ModeDefault {
		t.Errorf("auto without the sandbox starts as %s, want default", unsandboxed.Mode())
	}
	if err := unsandboxed.SetMode(ModeAuto); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("SetMode(auto) without the sandbox = %v", err)
	}
	unsandboxed.Fold(session.Record{Type: session.TypeMode, Mode: string(ModeAuto)})
	if unsandboxed.Mode() != ModeDefault {
		t.Errorf("a logged auto without the sandbox gives %s, want default", unsandboxed.Mode())
	}

	sandboxed := New(Config{Provider: reply2(), Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Auto: true, Permit: ask.permit})
	if err := sandboxed.SetMode(ModeAuto); err != nil {
		t.Fatal(err)
	}
	if _, err := sandboxed.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	if len(ask.asked) != 0 {
		t.Errorf("auto asked about %q", ask.asked)
	}
}

// A turn with a token budget ends once its model calls have used it: the
// calls of the last answer run and are logged, and the model is not asked
// again.
func TestTokenBudget(t *testing.T) {
	e := newEnv(t)
	a := New(Config{Provider: scripted(t, `{"turns": [
		{"tool_calls": [{"id": "x", "name": "look", "args": {"id": "x"}}], "input_tokens": 600, "output_tokens": 50},
		{"tool_calls": [{"id": "y", "name": "look", "args": {"id": "y"}}], "input_tokens": 700, "output_tokens": 50},
		{"text": "never asked"}]}`), Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools, TokenBudget: 1000})
	stop, err := a.Prompt(t.Context(), "go")
	if err != nil || stop != StopBudget {
		t.Fatalf("Prompt = %v, %v; want the budget's stop", stop, err)
	}
	recs := e.records(t)
	if got, want := summary(recs), []string{"user go", `call x look {"id":"x"}`, "result x ok: look x done",
		`call y look {"id":"y"}`, "result y ok: look y done", "end budget"}; !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
}

// A policy that turns the bypass mode off (Claude Code's
// disableBypassPermissionsMode) holds everywhere: bypass asked for at the
// start gives the default mode, SetMode refuses it naming the file, and a
// log that set it gives the default mode on reload.
func TestBypassTurnedOff(t *testing.T) {
	e := newEnv(t)
	p := &probe{}
	a := New(Config{Provider: &fakeProvider{}, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Mode: ModeBypass, NoBypass: "/etc/policy.json"})
	if a.Mode() != ModeDefault || a.BypassAvailable() {
		t.Errorf("bypass turned off starts as %s (available: %v)", a.Mode(), a.BypassAvailable())
	}
	if err := a.SetMode(ModeBypass); err == nil || !strings.Contains(err.Error(), "turned off by disableBypassPermissionsMode in /etc/policy.json") {
		t.Errorf("SetMode(bypass) = %v", err)
	}
	if err := a.SetMode(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	a.Fold(session.Record{Type: session.TypeMode, Mode: string(ModeBypass)})
	if a.Mode() != ModeDefault {
		t.Errorf("a logged bypass gives %s, want default", a.Mode())
	}
	open := New(Config{Provider: &fakeProvider{}, Registry: tool.NewRegistry(p.tools()...), Log: e.log, Tools: e.tools, Mode: ModeBypass})
	if open.Mode() != ModeBypass || !open.BypassAvailable() {
		t.Errorf("without the policy: %s", open.Mode())
	}
}
