package chat

import (
	"strings"
	"sync/atomic"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// The chat's I/O runs in the commands Update returns, never in Update: the
// first @ walks the workspace, /resume opens a session and reads its log, a
// prompt reads the files it attaches — each only when its command runs, which
// answers with a message that Update applies.

func TestAtWalkRunsInACommand(t *testing.T) {
	h := newHarness(t, 80)
	var walks atomic.Int32
	h.m.cfg.Files = func() []string {
		walks.Add(1)
		return []string{"internal/big/file.go", "main.go"}
	}
	h.typeText("look at @")
	if n := walks.Load(); n != 0 || !h.m.walking {
		t.Fatalf("the @ walk ran %d times inside Update (walking %v); want it left to a command", n, h.m.walking)
	}
	walk := h.last
	h.typeText("mai") // typed while the walk runs: no second walk
	h.last = walk
	h.settle()
	if n := walks.Load(); n != 1 {
		t.Errorf("the workspace was walked %d times, want once", n)
	}
	if len(h.m.comp) == 0 || h.m.comp[0].value != "@main.go" {
		t.Errorf("after the walk, @mai offers %v", h.m.comp)
	}
}

func TestResumeRunsInACommand(t *testing.T) {
	h := newHarness(t, 80)
	var opens atomic.Int32
	other := &fakeSession{id: "20261201-110000-othersss"}
	h.m.cfg.Open = func(id string, replay Replay) (Opened, error) {
		opens.Add(1)
		replay(h.m.reg, session.Record{Type: session.TypeUser, Text: "an earlier prompt"})
		replay(h.m.reg, session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 7, OutputTokens: 1}})
		return Opened{Session: other, Registry: h.m.reg}, nil
	}
	h.typeText("/resume " + other.id)
	h.send(key(tea.KeyEnter, 0))
	if n := opens.Load(); n != 0 || h.m.sess == other {
		t.Fatalf("/resume opened the session inside Update (%d opens)", n)
	}
	h.settle()
	if n := opens.Load(); n != 1 || h.m.sess != other {
		t.Fatalf("after its command, %d opens and the session is %v", n, h.m.sess.ID())
	}
	if p := h.printed.String(); !strings.Contains(p, "› an earlier prompt") || !strings.Contains(p, "resumed session "+other.id) {
		t.Errorf("the resumed history is not printed:\n%s", p)
	}
}

// TestInputGoesToTheHostInACommand: Enter hands what was typed, as typed, to
// the host off the update loop (which reads the files it names).
func TestInputGoesToTheHostInACommand(t *testing.T) {
	h := newHarness(t, 80)
	h.typeText("explain @main.go @nope")
	h.send(key(tea.KeyEnter, 0))
	if !h.m.running || len(h.sess.prompts) != 0 {
		t.Fatalf("Enter: running %v, prompts %q", h.m.running, h.sess.prompts)
	}
	var done *submittedMsg
	for _, msg := range h.runLast() {
		if m, ok := msg.(submittedMsg); ok {
			done = &m
		}
	}
	if done == nil || len(h.sess.texts) != 1 || h.sess.texts[0] != "explain @main.go @nope" {
		t.Fatalf("the input was not handed to the host in a command: %q", h.sess.texts)
	}
	h.send(*done)
	if h.m.running {
		t.Error("the turn's end should leave the chat idle")
	}
}

// The first prompt of a new chat opens the session and is a running turn like
// any other: the status line says so and Esc cancels it.
func TestFirstPromptRuns(t *testing.T) {
	h := newHarness(t, 80)
	h.m.attach(Opened{Registry: h.m.reg}) // a new chat: no session yet
	first := &fakeSession{id: "20261201-130000-firstsss"}
	h.m.cfg.Open = func(string, Replay) (Opened, error) { return Opened{Session: first, Registry: h.m.reg}, nil }
	h.typeText("hello")
	h.send(key(tea.KeyEnter, 0))
	for range 3 { // the session opens, then the prompt waiting for it is sent
		for _, msg := range h.runLast() {
			if _, ok := msg.(openedMsg); ok {
				h.send(msg)
			}
		}
		if h.m.sess == first {
			break
		}
	}
	if h.m.sess != first || !h.m.running {
		t.Fatalf("after the session opened: session %v, running %v", h.m.sess, h.m.running)
	}
	// The host says the turn runs; the status line says what the host says.
	h.events(host.Event{Kind: host.KindStatus, Status: host.Status{State: host.StateWorking}})
	if s := ansi.Strip(h.m.statusLine()); !strings.Contains(s, "working") {
		t.Errorf("the first turn's status line: %q", s)
	}
	h.send(key(tea.KeyEscape, 0))
	if first.cancels != 1 {
		t.Errorf("Esc cancelled %d times, want once", first.cancels)
	}
}
