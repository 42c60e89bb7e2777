package chat

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/termui"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// updating reports -update, which rewrites the golden files. The flag is
// teatest's (its golden package defines it), so one flag serves both.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fakeSession stands in for a host session where a test feeds the events itself.
// Its built-in commands answer with what they were asked, and its custom
// commands expand as the host's do (the host's own door is tested with a real
// session, in hostcommands_test.go and the host's tests).
type fakeSession struct {
	id       string
	status   host.Status
	prompts  []string
	texts    []string         // each prompt's text as the chat gave it (pastes as placeholders)
	parts    [][]card.Content // each prompt's content blocks
	commands []string
	cancels  int
	models   []models.Info  // what /model without a name lists
	points   []host.Point   // the changes /rewind and /diff list
	custom   []host.Command // its custom commands
	// logged are the command records Submit logged, which the harness
	// delivers as the host's stream would.
	logged []session.Record
}

func (f *fakeSession) ID() string           { return f.id }
func (f *fakeSession) Status() host.Status  { return f.status }
func (f *fakeSession) Cancel()              { f.cancels++ }
func (f *fakeSession) Running() bool        { return false }
func (f *fakeSession) Models() []host.Model { return f.models }
func (f *fakeSession) Points(context.Context) ([]host.Point, error) {
	return f.points, nil
}
func (f *fakeSession) Close() error { return nil }

func (f *fakeSession) Answers(text string, where host.Where) bool {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(text), "/"), " ")
	for _, c := range host.Builtins(where) {
		if strings.HasPrefix(strings.TrimSpace(text), "/") && c.Name == name {
			return name != "compact" && name != "init" && name != "review"
		}
	}
	return false
}

// CommandsFor is the table as the host makes it: a custom command replaces
// the built-in one of its name (the host's /review, for a review.md).
func (f *fakeSession) CommandsFor(where host.Where) []host.Command {
	own := slices.DeleteFunc(host.Builtins(where), func(b host.Command) bool {
		return slices.ContainsFunc(f.custom, func(c host.Command) bool { return c.Name == b.Name })
	})
	return append(own, f.custom...)
}

// Submit answers a built-in command, expands a custom one and keeps the
// text the model would be sent.
func (f *fakeSession) Submit(_ context.Context, in host.Input) (host.Answer, error) {
	text, parts := in.Text, in.Content
	if name, args, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(text), "/"), " "); strings.HasPrefix(strings.TrimSpace(text), "/") {
		_ = ok
		for _, c := range f.CommandsFor(in.Where) {
			if c.Name != name {
				continue
			}
			if c.Custom() {
				parts = append([]card.Content{card.Expansion("/"+name, c.Expand(args, nil))}, parts...)
				break
			}
			switch name {
			case "new":
				return host.Answer{Command: name, Reply: host.Reply{Action: host.ActionNew}}, nil
			case "resume":
				return host.Answer{Command: name, Reply: host.Reply{Action: host.ActionResume, Arg: args}}, nil
			case "exit":
				return host.Answer{Command: name, Reply: host.Reply{Action: host.ActionExit}}, nil
			}
			f.commands = append(f.commands, "/"+name+" "+args)
			r := host.Reply{Text: "the host's answer to /" + name + " " + args}
			if name == "model" && args == "" {
				r.Models = f.models
			}
			f.logged = append(f.logged, session.Record{Type: session.TypeCommand, Text: strings.TrimSpace(text)},
				session.Record{Type: session.TypeReply, Text: r.Text})
			return host.Answer{Command: name, Reply: r}, nil
		}
	}
	f.prompts = append(f.prompts, attach.ModelText(text, parts))
	f.texts = append(f.texts, text)
	f.parts = append(f.parts, parts)
	return host.Answer{Turn: true, Stop: host.StopEndTurn}, nil
}

// harness drives the model's Update and View directly, in order, with what is
// printed above the chat captured: a frame is the printed text and the view.
type harness struct {
	t       *testing.T
	m       *Model
	last    tea.Cmd
	sess    *fakeSession
	printed strings.Builder
	now     time.Time
	root    string
}

func newHarness(t *testing.T, width int) *harness {
	t.Helper()
	h := &harness{t: t, sess: &fakeSession{id: "20261201-120000-testtest", status: host.Status{
		Model: "claude-sonnet-4-5", Window: 200_000, Mode: agent.ModeDefault}},
		now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), root: t.TempDir()}
	cfg := Config{
		Root: h.root, Model: "claude-sonnet-4-5", Width: width, Height: 30,
		History: &History{},
		Now:     func() time.Time { return h.now },
		Print:   func(s string) { h.printed.WriteString(s + "\n") },
	}
	h.m = New(cfg, Opened{Session: h.sess, Registry: toolset.New(toolset.Options{})})
	h.m.Init()
	return h
}

func (h *harness) send(msgs ...tea.Msg) {
	for _, msg := range msgs {
		_, h.last = h.m.Update(msg)
		// What the fake logged reaches the chat after the answer, as the
		// host's stream would deliver it.
		if h.sess != nil && len(h.sess.logged) > 0 {
			evs := make([]host.Event, 0, len(h.sess.logged))
			for _, r := range h.sess.logged {
				evs = append(evs, recordEvent(r))
			}
			h.sess.logged = nil
			last := h.last
			h.events(evs...)
			h.last = tea.Batch(last, h.last)
		}
	}
}

// runLast runs the commands the last update returned, as the program would, and
// returns the messages that come back within a moment (the spinner's tick and
// the notice's timer are left to run out on their own).
func (h *harness) runLast() []tea.Msg {
	out := make(chan tea.Msg, 64)
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			out <- msg
		}()
	}
	run(h.last)
	var msgs []tea.Msg
	timeout := time.After(200 * time.Millisecond)
	for {
		select {
		case m := <-out:
			msgs = append(msgs, m)
		case <-timeout:
			return msgs
		}
	}
}

// settle runs the commands of the last update and applies the messages of the
// chat's own I/O they return (a session opened, a prompt's files read, the
// workspace walked), until none come: what the program would do. It waits for
// every command to return (timers included), up to a bound for commands that
// wait for ever.
func (h *harness) settle() {
	for {
		var next []tea.Cmd
		for _, msg := range runAll(h.last) {
			switch msg.(type) {
			case openedMsg, filesMsg, resourcesMsg, sessionsMsg, modelsMsg, pointsMsg, expandedMsg, submittedMsg:
				h.send(msg)
				next = append(next, h.last)
			}
		}
		if len(next) == 0 {
			return
		}
		h.last = tea.Batch(next...)
	}
}

// runAll runs c (a batch: each of its commands) and returns the messages.
func runAll(c tea.Cmd) []tea.Msg {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var msgs []tea.Msg
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			mu.Lock()
			msgs = append(msgs, msg)
			mu.Unlock()
		}()
	}
	run(c)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a command that waits for ever
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]tea.Msg(nil), msgs...)
}

func key(code rune, mod tea.KeyMod) tea.KeyPressMsg {
	k := tea.KeyPressMsg{Code: code, Mod: mod}
	if mod == 0 && unicode.IsPrint(code) && code < tea.KeyExtended {
		k.Text = string(code)
	}
	return k
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(key(r, 0))
	}
}

func (h *harness) events(evs ...host.Event) {
	h.send(eventsMsg{gen: h.m.gen, events: evs})
}

// asks shows a permission or a question as the host sends it: its status
// says it waits for the user first.
func (h *harness) asks(e host.Event) {
	st := h.m.status
	st.State = host.StateWaiting
	h.events(host.Event{Kind: host.KindStatus, Status: st}, e)
}

// turnEnds ends the turn as the host does: its status says idle, then the
// prompt returns.
func (h *harness) turnEnds(stop host.StopReason, err error) {
	st := h.m.status
	st.State = host.StateIdle
	h.events(host.Event{Kind: host.KindStatus, Status: st})
	h.send(turnDoneMsg{gen: h.m.gen, stop: stop, err: err})
}

// working is a turn running, as the chat knows it (it started one) and as the
// host's status says.
func (h *harness) working() {
	h.m.running, h.m.status.State = true, host.StateWorking
}

func recordEvent(r session.Record) host.Event { return host.Event{Kind: host.KindRecord, Record: r} }

// screen is what the terminal shows: the printed scrollback, then the view.
func (h *harness) screen() string {
	view := ansi.Strip(h.m.View().Content)
	s := h.printed.String() + "─── live ───\n" + view + "\n"
	s = strings.ReplaceAll(s, h.root, "$ROOT")
	return runningFor.ReplaceAllString(s, "running for Ns") // a job's age depends on the machine
}

var runningFor = regexp.MustCompile(`running for \d+s`)

// frame checks a frame against its golden file and that no line is wider than
// the terminal: the chat wraps, it never relies on the terminal cutting.
func (h *harness) frame(name string) {
	h.t.Helper()
	got := h.screen()
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > h.m.width {
			h.t.Errorf("%s: line %d is %d columns, wider than %d: %q", name, i+1, w, h.m.width, l)
		}
	}
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		h.t.Errorf("%s differs from %s (run with -update after checking):\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestFrameTyping(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("explain the parser")
	h.send(key(tea.KeyEnter, tea.ModShift))
	h.typeText("in two lines")
	h.frame("typing")
	if got := h.m.input.Value(); got != "explain the parser\nin two lines" {
		t.Errorf("Shift+Enter should start a new line; input is %q", got)
	}
	h.send(key('j', tea.ModCtrl))
	h.typeText("please")
	if got := h.m.input.Value(); !strings.HasSuffix(got, "\nplease") {
		t.Errorf("Ctrl-J should start a new line; input is %q", got)
	}
	h.send(key(tea.KeyEnter, 0))
	if !h.m.running || h.m.input.Value() != "" {
		t.Errorf("Enter should send the prompt and clear the input (running %v, input %q)", h.m.running, h.m.input.Value())
	}
	h.settle()
	if len(h.sess.prompts) != 1 || h.sess.prompts[0] != "explain the parser\nin two lines\nplease" {
		t.Errorf("the model should get the typed prompt, got %q", h.sess.prompts)
	}
	if h.m.cfg.History.Len() != 1 {
		t.Errorf("the prompt should be in the history")
	}
}

func TestFrameStreaming(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("hi")
	h.send(key(tea.KeyEnter, 0))
	h.working()
	h.events(recordEvent(session.Record{Type: session.TypeUser, Text: "hi"}),
		host.Event{Kind: host.KindModelRequest},
		host.Event{Kind: host.KindDelta, Delta: provider.Delta{Type: provider.DeltaThinking, Text: "The user says hi."}},
		host.Event{Kind: host.KindDelta, Delta: provider.Delta{Type: provider.DeltaText, Text: "Hello! Here is **bold** text and a list:\n\n- one\n- tw"}})
	h.frame("streaming")
	h.events(recordEvent(session.Record{Type: session.TypeThinking, Text: "The user says hi."}),
		recordEvent(session.Record{Type: session.TypeAssistant, Text: "Hello! Here is **bold** text and a list:\n\n- one\n- two"}),
		host.Event{Kind: host.KindStatus, Status: host.Status{Model: "claude-sonnet-4-5", Mode: agent.ModeDefault, Window: 200_000, InputTokens: 1200, OutputTokens: 30, ContextTokens: 24_000}},
		recordEvent(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 1200, OutputTokens: 30, ContextTokens: 24_000}}))
	h.turnEnds(agent.StopEndTurn, nil)
	h.frame("streamed")
}

func TestFramePermission(t *testing.T) {
	h := newHarness(t, 80)
	args := []byte(`{"command":"rm -rf build && make"}`)
	h.working()
	h.events(recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: args}))
	req := agent.PermissionRequest{CallID: "c1", Tool: "bash", Args: args,
		Card:     &card.TerminalCall{Title: "rm -rf build && make"},
		Approval: tool.Approval{Label: "commands starting with rm or make", Remember: true, Keys: []string{"bash:rm", "bash:make"}}}
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	h.frame("permission")
	h.now = h.now.Add(time.Second) // seen, and the user paused
	h.typeText("x")                // not an answer: the prompt stays, the input gets nothing
	if h.m.perm == nil || h.m.input.Value() != "" {
		t.Errorf("a key that is not an answer must do nothing (prompt %v, input %q)", h.m.perm != nil, h.m.input.Value())
	}
	h.now = h.now.Add(time.Second)
	h.typeText("y")
	if h.m.perm != nil {
		t.Error("y should answer the prompt")
	}

	// Without Remember there is no "always", and "a" does not answer.
	req.Approval = tool.Approval{Label: "this exact command"}
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	h.frame("permission-once")
	h.now = h.now.Add(time.Second)
	h.typeText("a")
	if h.m.perm == nil {
		t.Error(`"a" must not answer a request that cannot be remembered`)
	}
	h.now = h.now.Add(time.Second)
	h.typeText("n")
	if h.m.perm != nil {
		t.Error("n should answer the prompt")
	}
}

// TestTypedAheadNeverAnswers attacks the prompt as issue 19 did: the user is
// typing "and …" when a request arrives. The keys typed before it was shown,
// and those typed on without a pause, go to the input; only a key after a
// pause answers.
func TestTypedAheadNeverAnswers(t *testing.T) {
	h := newHarness(t, 80)
	h.working()
	args := []byte(`{"command":"rm -rf build"}`)
	h.events(recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: args}))
	req := agent.PermissionRequest{CallID: "c1", Tool: "bash", Args: args, Card: &card.TerminalCall{Title: "rm -rf build"},
		Approval: tool.Approval{Label: "rm -rf build", Remember: true, Keys: []string{"command:rm -rf build"}}}
	h.typeText("th")
	p := &host.Permission{Request: req}
	h.asks(host.Event{Kind: host.KindPermission, Permission: p})
	h.typeText("and ya") // at once: typing on, not answering
	if h.m.perm == nil {
		t.Fatal("a key typed on as the prompt appeared answered it")
	}
	if got := h.m.input.Value(); got != "thand ya" {
		t.Errorf("input = %q, want the typed-ahead keys kept", got)
	}
	h.now = h.now.Add(100 * time.Millisecond)
	h.typeText("y") // still typing
	if h.m.perm == nil {
		t.Fatal("a key typed without a pause answered the prompt")
	}
	h.now = h.now.Add(time.Second)
	h.typeText("n")
	if h.m.perm != nil {
		t.Error("a deliberate n did not answer")
	}
}

func TestFrameCancelled(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("run the tests")
	h.send(key(tea.KeyEnter, 0))
	h.working()
	h.events(recordEvent(session.Record{Type: session.TypeUser, Text: "run the tests"}),
		recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: []byte(`{"command":"go test ./..."}`)}),
		host.Event{Kind: host.KindCallStarted, CallID: "c1"},
		recordEvent(session.Record{Type: session.TypeProgress, CallID: "c1", Chunk: "ok   pkg/a  0.1s\nok   pkg/b  0.3s\n--- FAIL: TestC"}))
	h.frame("running")
	h.send(key('c', tea.ModCtrl))
	if h.sess.cancels != 1 {
		t.Fatalf("Ctrl-C should cancel the turn once, cancelled %d times", h.sess.cancels)
	}
	if h.m.quitting {
		t.Fatal("one Ctrl-C must not exit")
	}
	exit := -1
	h.events(recordEvent(session.Record{Type: session.TypeToolResult, CallID: "c1",
		Result: &tool.Result{Content: []card.Content{{Type: "text", Text: "ok   pkg/a  0.1s\nok   pkg/b  0.3s\n--- FAIL: TestC"}}, IsError: true,
			Meta: []byte(`{"exitCode":null,"signal":"SIGKILL"}`)}}),
		recordEvent(session.Record{Type: session.TypeTurnEnd, StopReason: "cancelled"}))
	_ = exit
	h.turnEnds(agent.StopCancelled, context.Canceled)
	h.frame("cancelled")

	// A second Ctrl-C within 2 s exits; after 2 s it is a first one again.
	h.now = h.now.Add(3 * time.Second)
	h.send(key('c', tea.ModCtrl))
	if h.m.quitting {
		t.Fatal("a Ctrl-C 3 s after the last must not exit")
	}
	h.now = h.now.Add(time.Second)
	h.send(key('c', tea.ModCtrl))
	if !h.m.quitting {
		t.Fatal("a second Ctrl-C within 2 s must exit")
	}
}

func TestEscCancels(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("go")
	h.send(key(tea.KeyEnter, 0))
	h.send(key(tea.KeyEscape, 0))
	if h.sess.cancels != 1 || h.m.quitting {
		t.Errorf("Esc should cancel the turn and not exit (cancels %d, quitting %v)", h.sess.cancels, h.m.quitting)
	}
}

// demoEvents runs the demo's scripted session, which uses every tool, on a real
// host session and returns its events.
func demoEvents(t *testing.T) ([]host.Event, *tool.Registry, string) {
	t.Helper()
	ws := t.TempDir()
	if err := demo.Install(ws); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse(demo.Script)
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: ws, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var evs []host.Event
	sub := s.Subscribe(func(e host.Event) { evs = append(evs, e) })
	if _, err := s.Prompt(context.Background(), demo.Prompt); err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return evs, s.Registry(), ws
}

// TestFrameCards prints every card kind of the demo, at 100 and at 60 columns.
func TestFrameCards(t *testing.T) {
	evs, reg, ws := demoEvents(t)
	for _, width := range []int{100, 60} {
		h := newHarness(t, width)
		h.m.attach(Opened{Session: h.sess, Registry: reg})
		h.root, h.m.cfg.Root = ws, ws
		h.m.sb.r.SetRoot(ws) // the chat's workspace: its paths show relative
		h.working()
		for _, e := range evs {
			if e.Kind == host.KindDelta || e.Kind == host.KindPermission || e.Kind == host.KindUsage {
				continue
			}
			if e.Kind == host.KindRecord && e.Record.Type == session.TypeProgress && e.Record.CallID == "" {
				continue
			}
			h.events(e)
		}
		h.turnEnds(agent.StopEndTurn, nil)
		name := "cards"
		if width == 60 {
			name = "cards-60"
		}
		h.frame(name)
	}
}

// TestLiveMatchesResume: a session printed live and the same log printed on
// resume read the same, card for card.
func TestLiveMatchesResume(t *testing.T) {
	evs, reg, _ := demoEvents(t)
	live := newHarness(t, 80)
	live.m.attach(Opened{Session: live.sess, Registry: reg})
	resumed := newHarness(t, 80)
	resumed.m.cfg.Open = func(_ string, replay Replay) (Opened, error) {
		for _, e := range evs {
			if e.Kind == host.KindRecord {
				replay(reg, e.Record)
			}
		}
		return Opened{Session: &fakeSession{id: "20261201-110000-resumedd"}, Registry: reg}, nil
	}
	for _, e := range evs {
		if e.Kind == host.KindRecord {
			live.events(e)
		}
	}
	resumed.typeText("/resume 20261201-110000-resumedd")
	resumed.send(key(tea.KeyEnter, 0))
	resumed.settle()
	got := strings.TrimPrefix(resumed.printed.String(), "› /resume 20261201-110000-resumedd\n\n")
	got = strings.TrimSuffix(got, "\n· resumed session 20261201-110000-resumedd\n")
	if want := live.printed.String(); got != want {
		t.Errorf("resume differs from live:\n%s\n--- live\n%s", got, want)
	}
}

func TestFrameNarrow(t *testing.T) {
	h := newHarness(t, 60)
	h.typeText("a prompt long enough that at sixty columns it has to wrap onto a second line of the input")
	h.events(recordEvent(session.Record{Type: session.TypeAssistant,
		Text: "A reply whose words go on past sixty columns, with `code that is long` and a URL https://example.com/a/very/long/path/that/cannot/break/at/a/space/anywhere"}))
	h.frame("narrow")
}

func TestSlashCommands(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("/he")
	h.frame("slash-completion")
	h.send(key(tea.KeyTab, 0))
	if got := h.m.input.Value(); got != "/help " {
		t.Fatalf("Tab should complete /help, input is %q", got)
	}
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	// The host carries out the session's commands; the chat shows the reply.
	for _, c := range []string{"/mode bypass", "/cost", "/model"} {
		h.typeText(c)
		h.send(key(tea.KeyEnter, 0))
		h.send(h.runLast()...)
	}
	h.frame("slash-commands")
	if want := []string{"/help ", "/mode bypass", "/cost ", "/model "}; !slices.Equal(h.sess.commands, want) {
		t.Errorf("the host was asked %q, want %q", h.sess.commands, want)
	}
	if len(h.sess.prompts) != 0 || h.m.running {
		t.Errorf("built-in commands must not reach the model: %q", h.sess.prompts)
	}
	// /compact is a turn of its own, not a prompt.
	h.typeText("/compact the tests")
	h.send(key(tea.KeyEnter, 0))
	if len(h.sess.prompts) != 0 || !h.m.running {
		t.Errorf("/compact: prompts %q, running %v; want a compaction running", h.sess.prompts, h.m.running)
	}
	h.send(h.runLast()...)
	h.typeText("/exit")
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if !h.m.quitting {
		t.Error("/exit should quit")
	}
}

func TestCustomCommandExpands(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "review.md"), []byte("---\ndescription: review a file\n---\nReview $ARGUMENTS carefully.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds, err := command.All([]command.Dir{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 80)
	h.sess.custom = cmds
	h.m.attach(Opened{Session: h.sess, Registry: h.m.reg})
	h.typeText("/review main.go")
	h.send(key(tea.KeyEnter, 0))
	if !h.m.running {
		t.Fatal("a custom command should start a turn")
	}
	h.settle()
	if len(h.sess.prompts) != 1 || h.sess.prompts[0] != "Review main.go carefully.\n" {
		t.Errorf("the custom command's body should be the prompt, got %q", h.sess.prompts)
	}
}

func TestLargePasteIsOnePlaceholder(t *testing.T) {
	h := newHarness(t, 80)
	var big strings.Builder
	for i := range 500 {
		big.WriteString(strings.Repeat("x", 40) + " " + string(rune('a'+i%26)) + "\r\n")
	}
	h.typeText("look at this: ")
	h.send(tea.PasteMsg{Content: big.String()})
	h.send(tea.PasteMsg{Content: "small"})
	h2 := newHarness(t, 80)
	h2.send(tea.PasteMsg{Content: strings.Repeat("line\r", 20)}) // tmux pastes line ends as CR
	if got := h2.m.input.Value(); got != "[paste #1: 20 lines, 100 bytes]" {
		t.Errorf("a paste with CR line ends: input = %q", got)
	}
	if got, want := h.m.input.Value(), "look at this: [paste #1: 500 lines, 21500 bytes]small"; got != want {
		t.Fatalf("input = %q, want %q", got, want)
	}
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	want := "look at this: " + strings.ReplaceAll(big.String(), "\r\n", "\n") + "small"
	if len(h.sess.prompts) != 1 || h.sess.prompts[0] != want {
		t.Errorf("the prompt should hold the whole paste; got %d prompts, first %.80q", len(h.sess.prompts), h.sess.prompts)
	}
}

func TestHistoryPerWorkspace(t *testing.T) {
	state := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}
	a, b := HistoryPath("/src/a", getenv), HistoryPath("/src/b", getenv)
	if a == b || !strings.HasPrefix(a, filepath.Join(state, "dsh", "history")) {
		t.Fatalf("history files %s and %s", a, b)
	}
	ha, err := LoadHistory(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"first", "two\nlines", "two\nlines", "third"} {
		if err := ha.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	again, err := LoadHistory(a)
	if err != nil {
		t.Fatal(err)
	}
	if again.Len() != 3 || again.At(1) != "two\nlines" {
		t.Errorf("reloaded history has %d entries: %q", again.Len(), again.entries)
	}
	if hb, _ := LoadHistory(b); hb.Len() != 0 {
		t.Error("another workspace must not see this one's history")
	}

	h := newHarness(t, 80)
	h.m.cfg.History = again
	h.typeText("draft")
	h.send(key(tea.KeyUp, 0))
	if got := h.m.input.Value(); got != "third" {
		t.Errorf("↑ should show the last prompt, got %q", got)
	}
	h.send(key(tea.KeyUp, 0))
	h.send(key(tea.KeyDown, 0))
	h.send(key(tea.KeyDown, 0))
	if got := h.m.input.Value(); got != "draft" {
		t.Errorf("↓ past the newest should bring the draft back, got %q", got)
	}
}

// TestMatchFiles: @ completion ranks files by fuzzy match.
func TestMatchFiles(t *testing.T) {
	got := matchFiles([]string{"README.md", "internal/chat/chat.go", "internal/cli/chat.go", "main.go"}, "clichat", 3)
	if len(got) == 0 || got[0] != "internal/cli/chat.go" {
		t.Errorf("fuzzy match of clichat: %v", got)
	}
}

// TestNoColor: without colour (NO_COLOR, --color never) neither the view nor
// what is printed holds a style but the input's cursor (reverse video, which
// NO_COLOR leaves alone); with it, both do.
func TestNoColor(t *testing.T) {
	for _, color := range []bool{false, true} {
		h := newHarness(t, 80)
		h.m.cfg.Color = color
		h.m.sb.r = termui.New(&h.m.sb.out, termui.Options{Color: color, Width: 80})
		h.m.input.SetStyles(plainTextareaStyles())
		if color {
			h.m.input.SetStyles(colorTextareaStyles())
		}
		h.typeText("/mode")
		h.send(key(tea.KeyEnter, 0))
		h.events(recordEvent(session.Record{Type: session.TypeAssistant, Text: "**bold**"}))
		got := h.printed.String() + h.m.View().Content
		got = strings.Replace(got, "\x1b[7mA\x1b[m", "A", 1) // the cursor on the placeholder
		if has := strings.Contains(got, "\x1b["); has != color {
			t.Errorf("colour %v: escapes present %v:\n%q", color, has, got)
		}
	}
}

// rawOut is what the commands of the last update print to the terminal raw.
func (h *harness) rawOut() string {
	var b strings.Builder
	for _, msg := range h.runLast() {
		if r, ok := msg.(tea.RawMsg); ok {
			fmt.Fprint(&b, r.Msg)
		}
	}
	return b.String()
}

func TestNotifyOnlyWhenAway(t *testing.T) {
	const done = "\a\x1b]9;dsh: done\a"
	h := newHarness(t, 80)
	h.m.cfg.Notify = true
	if !h.m.View().ReportFocus {
		t.Fatal("the chat must ask the terminal to report focus when it notifies")
	}
	h.working()
	h.turnEnds(agent.StopEndTurn, nil)
	if got := h.rawOut(); got != "" {
		t.Errorf("a turn that ends while the terminal has focus must not notify, got %q", got)
	}

	h.send(tea.BlurMsg{})
	h.working()
	h.turnEnds(agent.StopEndTurn, nil)
	if got := h.rawOut(); got != done {
		t.Errorf("a turn that ends while the terminal is away: got %q, want %q", got, done)
	}
	h.working()
	req := agent.PermissionRequest{CallID: "c1", Tool: "bash", Args: []byte(`{"command":"make"}`),
		Card: &card.TerminalCall{Title: "make"}, Approval: tool.Approval{Label: "this exact command"}}
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	if got, want := h.rawOut(), "\a\x1b]9;dsh: bash waits for your answer\a"; got != want {
		t.Errorf("a prompt shown while away: got %q, want %q", got, want)
	}
	if s := ansi.Strip(h.m.statusLine()); !strings.Contains(s, "waiting for you") {
		t.Errorf("the status line must say the chat waits for the user, got %q", s)
	}

	h.send(tea.FocusMsg{})
	h.m.perm = nil
	h.events(host.Event{Kind: host.KindStatus, Status: host.Status{State: host.StateIdle}})
	h.turnEnds(agent.StopEndTurn, nil)
	if got := h.rawOut(); got != "" {
		t.Errorf("back in focus, nothing is notified, got %q", got)
	}
	if s := ansi.Strip(h.m.statusLine()); !strings.Contains(s, "idle") {
		t.Errorf("an idle chat's status line says so, got %q", s)
	}

	h.m.cfg.Notify = false
	h.send(tea.BlurMsg{})
	h.turnEnds(agent.StopEndTurn, nil)
	if got := h.rawOut(); got != "" || h.m.View().ReportFocus {
		t.Errorf("notify = false: nothing is sent (got %q) and focus is not asked for", got)
	}
}

// The edit approval shows the change once, numbered, in a box, the call held
// back from the scrollback until it is answered; a long change is cut to the
// box with a key (e) that opens a full-screen review where the first and the
// last row are reachable and y still answers.
func TestFrameEditApproval(t *testing.T) {
	h := newHarness(t, 100)
	h.working()
	var old, nw strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&nw, "line %d changed\n", i)
	}
	args := []byte(`{"path":"big.txt"}`)
	c := &card.DiffCall{Title: "Edit big.txt", Diffs: []card.FileDiff{{Path: "big.txt", OldText: card.Ptr("package main\n\nfunc main() {\n\tprintln(1)\n}\n"),
		NewText: "package main\n\nfunc main() {\n\tprintln(2)\n}\n", OldStart: 1, NewStart: 1}}}
	h.events(recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "edit", Args: args}))
	req := agent.PermissionRequest{CallID: "c1", Tool: "edit", Args: args, Card: c,
		Approval: tool.Approval{Label: "file edits in this session", Remember: true, Keys: []string{"edit"}}}
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	h.frame("approval-edit")
	if strings.Contains(h.m.permView(), "more rows") {
		t.Error("a short change is shown whole")
	}
	h.now = h.now.Add(time.Second)
	h.typeText("y")
	if out := ansi.Strip(h.printed.String()); strings.Count(out, "● edit") != 1 {
		t.Errorf("once answered, the call goes to the scrollback, once:\n%s", out)
	}

	long := &card.DiffCall{Title: "Edit big.txt", Diffs: []card.FileDiff{{Path: "big.txt", OldText: card.Ptr(old.String()), NewText: nw.String(), OldStart: 1, NewStart: 1}}}
	req.Card = long
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	if v := ansi.Strip(h.m.View().Content); !strings.Contains(v, "[e] to review all") || strings.Contains(v, "line 45 changed") ||
		strings.Count(v, "\n")+1 > viewRows(h.m.height) {
		t.Errorf("a long change is cut to the box, with [e] to review it:\n%s", v)
	}
	h.now = h.now.Add(time.Second)
	h.typeText("e")
	v := h.m.View()
	if s := ansi.Strip(v.Content); !v.AltScreen || !strings.Contains(s, "Edit big.txt") || !strings.Contains(s, "line 1\n") ||
		!strings.Contains(s, "g/G first/last") || !strings.Contains(s, "[y] yes") || h.m.perm == nil {
		t.Errorf("e opens the review full-screen at its first row, its keys shown:\n%s", s)
	}
	h.typeText("G")
	if s := ansi.Strip(h.m.View().Content); !strings.Contains(s, "line 60 changed") {
		t.Errorf("G shows the last row:\n%s", s)
	}
	h.typeText("g")
	h.send(key(tea.KeyPgDown, 0))
	if s := ansi.Strip(h.m.View().Content); strings.Contains(s, "   1    - line 1\n") || !strings.Contains(s, "rows ") {
		t.Errorf("PgDn shows the next page:\n%s", s)
	}
	h.typeText("q")
	if h.m.review != nil || h.m.perm == nil {
		t.Error("q goes back to the box, still asking")
	}
	h.typeText("e")
	h.typeText("y")
	if h.m.review != nil || h.m.perm != nil {
		t.Error("y in the review answers")
	}
}

func TestApprovalSaysWhereACommandRuns(t *testing.T) {
	h := newHarness(t, 100)
	h.working()
	h.m.status.Cwd = filepath.Join(h.root, "sub")
	h.m.status.Sandbox = "network-off"
	req := agent.PermissionRequest{CallID: "c1", Tool: "bash", Args: []byte(`{"command":"make"}`),
		Card: &card.TerminalCall{Title: "make"}, Approval: tool.Approval{Label: "this exact command"}}
	h.asks(host.Event{Kind: host.KindPermission, Permission: &host.Permission{Request: req}})
	if v := ansi.Strip(h.m.permView()); !strings.Contains(v, "in sub · sandboxed: writes only in the workspace and temp, no network") {
		t.Errorf("the command's approval should say where and how it runs:\n%s", v)
	}
	h.m.status.Cwd, h.m.status.Sandbox = h.root, ""
	h.m.setApproval()
	if v := ansi.Strip(h.m.permView()); !strings.Contains(v, "in the workspace root · not sandboxed") {
		t.Errorf("unsandboxed at the root:\n%s", v)
	}
}

// A flood of a command's output redraws the view at most every liveFrame;
// anything else (a key) redraws it at once.
func TestStreamingRedrawsAtFrameRate(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("go")
	h.send(key(tea.KeyEnter, 0))
	h.events(recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: []byte(`{"command":"yes"}`)}),
		host.Event{Kind: host.KindCallStarted, CallID: "c1"})
	_ = h.m.View()
	h.events(recordEvent(session.Record{Type: session.TypeProgress, CallID: "c1", Chunk: "first\n"}))
	if v := ansi.Strip(h.m.View().Content); strings.Contains(v, "first") {
		t.Errorf("output within a frame of the last redraw should wait for the next frame:\n%s", v)
	}
	h.now = h.now.Add(liveFrame)
	if v := ansi.Strip(h.m.View().Content); !strings.Contains(v, "first") {
		t.Errorf("a frame later the output shows:\n%s", v)
	}
	h.events(recordEvent(session.Record{Type: session.TypeProgress, CallID: "c1", Chunk: strings.Repeat("x", 3*tailBytes) + "\nsecond\n"}))
	h.typeText("k")
	v := ansi.Strip(h.m.View().Content)
	if !strings.Contains(v, "› k") || !strings.Contains(v, "second") {
		t.Errorf("a key redraws at once, with the output so far:\n%s", v)
	}
	if n := len(h.m.live["c1"].tail); n > tailBytes {
		t.Errorf("the tail keeps %d bytes, more than %d", n, tailBytes)
	}
}

// A tool's question shows its card and choices; keys typed ahead do not
// answer it, a number picks a choice, typed text is the user's own answer,
// Esc is no answer. The answer goes back to the tool.
func TestFrameQuestion(t *testing.T) {
	h := newHarness(t, 80)
	h.working()
	args := []byte(`{"plan":"# Notes\n\nWrite notes.txt.","files":["notes.txt"],"steps":["Write notes.txt"]}`)
	h.events(recordEvent(session.Record{Type: session.TypeToolCall, CallID: "p1", Name: "plan", Args: args}))
	ask := func(c card.Call, q tool.Question) *host.Question {
		hq := host.NewQuestion(agent.QuestionRequest{CallID: "p1", Tool: "plan", Card: c, Question: q})
		h.asks(host.Event{Kind: host.KindQuestion, Question: hq})
		return hq
	}
	answer := func(q *host.Question) card.Answer {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		a, err := q.Wait(ctx)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		return a
	}
	choices := []card.Choice{{ID: "default", Label: "Yes, and ask before each change"},
		{ID: "accept-edits", Label: "Yes, and accept file edits"}, {ID: "keep", Label: "No, keep planning", Description: "say what to change"}}
	q := ask(&card.PlanCall{Title: "Plan: Notes", Plan: "# Notes\n\nWrite notes.txt.", Files: []string{"notes.txt"}, Steps: []string{"Write notes.txt"}},
		tool.Question{Text: "Implement this plan?", Choices: choices, FreeText: true})
	h.frame("question-plan")
	h.typeText("2") // typed ahead: the input gets it
	if h.m.ask == nil || h.m.input.Value() != "2" {
		t.Fatalf("a key typed ahead answered (box %v, input %q)", h.m.ask != nil, h.m.input.Value())
	}
	h.now = h.now.Add(time.Second)
	h.typeText("2")
	if a := answer(q); a != (card.Answer{ID: "accept-edits", Text: "Yes, and accept file edits"}) || h.m.ask != nil {
		t.Errorf("2 answered %+v (box still shown: %v)", a, h.m.ask != nil)
	}

	qc := &card.QuestionCall{Title: "Which?", Question: "Which?", FreeText: true, Choices: []card.Choice{{ID: "1", Label: "A"}, {ID: "2", Label: "B"}}}
	q = ask(qc, tool.Question{Text: "Which?", Choices: qc.Choices, FreeText: true})
	h.now = h.now.Add(time.Second)
	h.typeText("n")
	// Once the first key is taken, the rest is typed at any speed.
	for _, r := range "ei" {
		h.now = h.now.Add(150 * time.Millisecond)
		h.typeText(string(r))
	}
	h.frame("question-typed")
	h.now = h.now.Add(time.Second)
	h.send(key(tea.KeyEnter, 0))
	if a := answer(q); a != (card.Answer{Text: "nei"}) {
		t.Errorf("typed answer %+v", a)
	}

	q = ask(qc, tool.Question{Text: "Which?", Choices: qc.Choices, FreeText: true})
	h.now = h.now.Add(time.Second)
	h.send(key(tea.KeyDown, 0))
	h.now = h.now.Add(time.Second)
	h.send(key(tea.KeyEnter, 0))
	if a := answer(q); a != (card.Answer{ID: "2", Text: "B"}) {
		t.Errorf("↓ Enter answered %+v", a)
	}
	q = ask(qc, tool.Question{Text: "Which?", Choices: qc.Choices})
	h.now = h.now.Add(time.Second)
	h.send(key(tea.KeyEscape, 0))
	if a := answer(q); !a.None() {
		t.Errorf("Esc answered %+v", a)
	}
}
