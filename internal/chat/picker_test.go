package chat

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

func TestFrameModelPicker(t *testing.T) {
	h := newHarness(t, 100)
	h.sess.models = []models.Info{
		{ID: "claude-opus-4-5", Name: "Claude Opus 4.5", ContextWindow: 200_000},
		{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", ContextWindow: 200_000},
		{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", ContextWindow: 200_000},
	}
	h.sess.status.Model = "claude-sonnet-4-5"
	h.events(host.Event{Kind: host.KindStatus, Status: h.sess.status})
	h.typeText("/model")
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if h.m.picker == nil {
		t.Fatalf("/model without a name should open the model picker; printed:\n%s", h.printed.String())
	}
	h.frame("model-picker")
	h.typeText("haiku")
	h.frame("model-picker-filtered")
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if h.m.picker != nil {
		t.Error("Enter should close the picker")
	}
	if want := "/model claude-haiku-4-5 default"; !slices.Contains(h.sess.commands, want) {
		t.Errorf("choosing a model should run %q in the host, ran %q", want, h.sess.commands)
	}

	// Esc leaves the picker without choosing; a filter that matches nothing says so.
	h.typeText("/model")
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	h.typeText("zzz")
	if got := h.m.picker.shown(); len(got) != 0 {
		t.Errorf("no model matches zzz, shown %v", got)
	}
	h.send(key(tea.KeyEnter, 0)) // nothing to choose
	h.send(key(tea.KeyEscape, 0))
	if h.m.picker != nil || len(h.sess.commands) != 3 {
		t.Errorf("Esc should leave the picker and run nothing, ran %q", h.sess.commands)
	}
}

func TestFrameSessionPicker(t *testing.T) {
	h := newHarness(t, 100)
	infos := []session.Info{
		{ID: "20261201-113000-aaaaaaaa", FirstPrompt: "fix the flaky test\nin cli", Updated: h.now.Add(-30 * time.Minute)},
		{ID: "20261130-090000-bbbbbbbb", FirstPrompt: "", Updated: h.now.Add(-27 * time.Hour)},
		{ID: "20261120-090000-cccccccc", FirstPrompt: "write the README", Updated: h.now.Add(-11 * 24 * time.Hour)},
	}
	h.m.cfg.Sessions = func() ([]session.Info, error) { return infos, nil }
	var opened []string
	h.m.cfg.Open = func(id string, _ Replay) (Opened, error) {
		opened = append(opened, id)
		return Opened{Session: h.sess}, nil
	}
	h.typeText("/resume")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	h.frame("session-picker")
	h.typeText("readme")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	if !slices.Equal(opened, []string{"20261120-090000-cccccccc"}) {
		t.Errorf("choosing the README session should open it, opened %q", opened)
	}
}

// The chat's /model offers the host's list: the one the editor's picker shows.
func TestModelPickerIsTheHostsList(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [{"text": "unused"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := host.Options{SessionDir: t.TempDir(), Root: t.TempDir(), Model: "claude-sonnet-4-5",
		Provider: func() (provider.Provider, error) { return p, nil }}
	s, err := host.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want, err := s.Submit(context.Background(), host.Input{Text: "/model", Where: host.Both})
	if err != nil || len(want.Models) < 2 {
		t.Fatalf("the host lists %d models (%v)", len(want.Models), err)
	}
	h := &harness{t: t, now: time.Now()}
	h.m = New(Config{Root: t.TempDir(), Width: 100, Height: 30, Now: time.Now,
		History: &History{},
		Print:   func(s string) { h.printed.WriteString(s + "\n") }},
		Opened{Session: s, Registry: s.Registry()})
	h.typeText("/model")
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if h.m.picker == nil {
		t.Fatalf("no picker; printed:\n%s", h.printed.String())
	}
	var got []string
	for _, it := range h.m.picker.items {
		got = append(got, it.value)
	}
	var ids []string
	for _, m := range want.Models {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("the picker offers %q, the host %q", got, ids)
	}
	h.m.picker.sel = 1
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if st := s.Status(); st.Model != ids[1] {
		t.Errorf("after choosing %s the session's model is %s", ids[1], st.Model)
	}
}

// ←/→ in the model picker switch the thinking level among the host's levels
// (the editor's thinking option); Enter sets model and level in the host.
func TestModelPickerThinking(t *testing.T) {
	p, err := script.Parse([]byte(`{"turns": [{"text": "unused"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: t.TempDir(), Model: "claude-sonnet-4-5",
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := &harness{t: t, now: time.Now()}
	h.m = New(Config{Root: t.TempDir(), Width: 100, Height: 30, Now: time.Now,
		History: &History{},
		Print:   func(s string) { h.printed.WriteString(s + "\n") }},
		Opened{Session: s, Registry: s.Registry()})
	open := func() {
		h.typeText("/model")
		h.send(key(tea.KeyEnter, 0))
		h.send(h.runLast()...)
		if h.m.picker == nil {
			t.Fatalf("no picker; printed:\n%s", h.printed.String())
		}
	}
	open()
	var levels []string
	for _, l := range h.m.picker.levels {
		levels = append(levels, l.Value)
	}
	if want := []string{"default", "off", "adaptive", "low", "medium", "high", "xhigh", "max"}; !slices.Equal(levels, want) {
		t.Errorf("levels %q, want the host's %q", levels, want)
	}
	for range 5 {
		h.send(key(tea.KeyRight, 0))
	}
	if v := h.m.pickerView(h.m.picker); !strings.Contains(v, "thinking: ‹ High ›") {
		t.Errorf("the picker should show the level chosen:\n%s", v)
	}
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if _, th := s.Model(); th != "high" {
		t.Errorf("thinking is %q after choosing High", th)
	}
	h.events(host.Event{Kind: host.KindStatus, Status: s.Status()})
	open()
	if l := h.m.picker.levels[h.m.picker.level]; l.Value != "high" {
		t.Errorf("the picker opens on the session's level, got %q", l.Value)
	}
	h.send(key(tea.KeyLeft, 0))
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if _, th := s.Model(); th != "medium" {
		t.Errorf("thinking is %q after ← to Medium", th)
	}
}

// /rewind's list goes back before a prompt's change in the way the user picks:
// its files (code), its conversation or both; an undo's change is its files.
func TestRewindPicker(t *testing.T) {
	h := newHarness(t, 100)
	points := []host.Point{{N: 1, Prompt: 1, Text: "add a cache"}, {N: 2, Text: "change 1"}, {N: 3, Prompt: 2, Text: "fix the test"}}
	for _, tc := range []struct{ pick, what, want string }{
		{"fix the test", "both", "/rewind 3 both"},
		{"add a cache", "conversation", "/rewind 1 conversation"},
		{"change 1", "", "/rewind 2"},
	} {
		h.m.picker = h.m.rewindPicker(points)
		h.typeText(tc.pick)
		h.send(key(tea.KeyEnter, 0))
		if tc.what != "" {
			if h.m.picker == nil || len(h.m.picker.items) != 3 {
				t.Fatalf("choosing %q should ask code, conversation or both", tc.pick)
			}
			h.typeText(tc.what)
			h.send(key(tea.KeyEnter, 0))
		}
		h.send(h.runLast()...)
		if got := h.sess.commands[len(h.sess.commands)-1]; strings.TrimSpace(got) != tc.want {
			t.Errorf("picked %q, %q: ran %q, want %q", tc.pick, tc.what, got, tc.want)
		}
	}
}

// The pickers open with keys too: Ctrl-S the sessions (as /resume), Alt-P
// the models (as /model), without a command in the log; /help names the keys.
func TestPickerKeys(t *testing.T) {
	h := newHarness(t, 100)
	h.m.cfg.Sessions = func() ([]session.Info, error) {
		return []session.Info{{ID: "20261120-090000-cccccccc", FirstPrompt: "write the README", Updated: h.now}}, nil
	}
	h.sess.models = []models.Info{{ID: "claude-opus-4-5"}, {ID: "claude-haiku-4-5"}}
	for _, tc := range []struct {
		key   tea.KeyPressMsg
		title string
	}{
		{key('s', tea.ModCtrl), "Resume which session?"},
		{key('p', tea.ModAlt), "Which model?"},
	} {
		h.send(tc.key)
		h.settle()
		if h.m.picker == nil || h.m.picker.title != tc.title {
			t.Fatalf("%s: picker %+v, want %q", tc.key, h.m.picker, tc.title)
		}
		h.send(key(tea.KeyEscape, 0))
	}
	if len(h.sess.commands) != 0 {
		t.Errorf("a picker's key ran %q in the host", h.sess.commands)
	}
	for _, k := range []string{"Ctrl-S", "Alt-P"} {
		if !strings.Contains(keysHelp, k) {
			t.Errorf("/help's keys do not name %s", k)
		}
	}
}
