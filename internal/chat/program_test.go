package chat

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// TestProgram runs the chat as a Bubble Tea program (teatest) on a real host
// session with a scripted model: keys go through the program's input, the
// permission prompt is answered with one key, the command really runs and its
// card is printed above the chat, and two Ctrl-C end the program. A /mode
// typed before the first prompt opens the session; the chat still sees it
// (it once left the chat blind: no cards, no permission prompt).
func TestProgram(t *testing.T) {
	t.Run("first prompt", func(t *testing.T) { testProgram(t, "") })
	t.Run("after /mode", func(t *testing.T) { testProgram(t, "/mode accept-edits") })
}

func testProgram(t *testing.T, first string) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse([]byte(`{"turns": [
		{"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "cp notes.txt copy.txt && tr a-z A-Z < notes.txt"}}]},
		{"text": "It says **REMEMBER THE MILK**."}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := host.Options{SessionDir: t.TempDir(), Root: ws, Mode: agent.ModeDefault, Ask: true,
		Provider: func() (provider.Provider, error) { return p, nil }}
	var opened *host.Session
	done := make(chan struct{})
	defer close(done)
	cfg := Config{
		Root: ws, Model: "script", Width: 80, Height: 30,

		History: &History{},
		Open: func(id string, replay Replay) (Opened, error) {
			s, err := host.Create(opts)
			if err != nil {
				return Opened{}, err
			}
			opened = s
			ch := make(chan host.Event, 64)
			sub := s.Subscribe(func(e host.Event) {
				select {
				case ch <- e:
				case <-done:
				}
			})
			go func() { <-sub.Done(); close(ch) }()
			return Opened{Session: s, Registry: s.Registry(), Events: ch}, nil
		},
	}
	m := New(cfg, Opened{})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 30))
	out := tm.Output()
	var seen bytes.Buffer
	wait := func(what string, s string) {
		t.Helper()
		teatest.WaitFor(t, out, func(b []byte) bool {
			seen.Write(b)
			return bytes.Contains([]byte(ansi.Strip(seen.String())), []byte(s))
		}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	want := []session.RecordType{session.TypeHeader}
	if first != "" {
		tm.Type(first)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		wait("the mode in the status line", "accept-edits ·")
		want = append(want, session.TypeCommand, session.TypeMode)
	}
	tm.Type("what do my notes say?")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	wait("the permission prompt", "[y] yes, once")
	time.Sleep(2 * permGrace) // an answer typed at once would be taken for typing ahead
	tm.Type("y")
	wait("the command's card", "REMEMBER THE MILK")
	wait("the model's answer", "It says REMEMBER THE MILK.")
	// The fold notes the turn's end once it is logged; the chat marks itself
	// idle when Prompt returns, a moment later.
	wait("the turn's end", "· done")
	time.Sleep(500 * time.Millisecond)
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if m.Interrupted {
		t.Error("no turn was running when the chat was left")
	}
	if opened == nil {
		t.Fatal("the first prompt should have opened a session")
	}
	if err := opened.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := session.ReadFile(opened.Path())
	if err != nil {
		t.Fatal(err)
	}
	var types []session.RecordType
	for _, r := range recs {
		if r.Type != session.TypeProgress {
			types = append(types, r.Type)
		}
	}
	// The prompt is checkpointed before and at its end (the host's /undo);
	// the user's answer to the call's prompt is logged, with who gave it.
	want = append(want, session.TypeCheckpoint, session.TypeUser, session.TypeAssistant, session.TypeToolCall,
		session.TypeDecision, session.TypeToolResult, session.TypeAssistant, session.TypeTurnEnd, session.TypeCheckpoint)
	if !equalTypes(types, want) {
		t.Errorf("the log holds %v, want %v", types, want)
	}
}

func equalTypes(a, b []session.RecordType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
