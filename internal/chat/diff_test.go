package chat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
)

// /diff in the chat, on a real host session whose prompt rewrote every line
// of a 2,000-line file: typed bare it offers the whole session and each
// change; the one chosen is the host's diff, too long for the screen, so it
// opens full-screen, where the first row (the file) and the last (its line
// 2,000) are reachable, and q goes back.
func TestDiffReview(t *testing.T) {
	root := t.TempDir()
	var old, rewritten strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&rewritten, "LINE %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse([]byte(`{"turns": [{"tool_calls": [{"name": "read", "args": {"path": "big.txt"}}]}, {"tool_calls": [{"name": "write", "args": {"path": "big.txt", "content": ` +
		fmt.Sprintf("%q", rewritten.String()) + `}}]}, {"text": "Rewritten."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: root, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Prompt(context.Background(), "shout every line"); err != nil {
		t.Fatal(err)
	}
	ch := make(chan host.Event, 4096)
	sub := s.Subscribe(func(e host.Event) { ch <- e })
	defer sub.Close()
	h := &harness{t: t, now: time.Now()}
	h.m = New(Config{Root: root, Width: 120, Height: 40, Now: time.Now, History: &History{},
		Print: func(s string) { h.printed.WriteString(s + "\n") }},
		Opened{Session: s, Registry: s.Registry()})

	h.typeText("/diff")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	if h.m.picker == nil || len(h.m.picker.items) != 2 {
		t.Fatalf("/diff should offer the session and its one change, picker %+v", h.m.picker)
	}
	if got := h.m.picker.items[1].label; !strings.Contains(got, "1. shout every line") || !strings.Contains(got, "big.txt +2000 −2000") {
		t.Errorf("the change is offered as %q", got)
	}
	h.send(key(tea.KeyDown, 0), key(tea.KeyEnter, 0)) // change 1
	h.settle()
	r := h.m.review
	if r == nil {
		t.Fatal("a diff taller than the screen should open full-screen")
	}
	if !strings.HasPrefix(r.title, `Prompt 1 ("shout every line") changed big.txt`) {
		t.Errorf("the review's title: %q", r.title)
	}
	page := func() string { return ansi.Strip(h.m.View().Content) }
	if first := page(); !strings.Contains(first, "rows 1–38 of ") || !strings.Contains(first, "big.txt") || !regexp.MustCompile(`(?m)^ +1 +- line 1$`).MatchString(first) {
		t.Errorf("the first page does not start at the top:\n%s", first)
	}
	h.send(key('G', 0))
	last := page()
	if !strings.Contains(last, "2000 + LINE 2000") || !strings.Contains(last, fmt.Sprintf("of %d", len(r.lines))) {
		t.Errorf("G does not reach the last row:\n%s", last)
	}
	h.typeText("x") // not the review's: nothing reaches the input
	h.send(key('g', 0))
	if !strings.Contains(page(), "rows 1–38") || h.m.input.Value() != "" {
		t.Errorf("g should go back to the first row, the input untouched (%q)", h.m.input.Value())
	}
	h.send(key('q', 0))
	if h.m.review != nil {
		t.Error("q should leave the review")
	}
	sub.Flush(5 * time.Second)
	for len(ch) > 0 {
		h.events(<-ch)
	}
	if out := h.printed.String(); !strings.Contains(out, "› /diff 1") || !strings.Contains(out, "changed big.txt") {
		t.Errorf("the command and its card should be in the scrollback:\n%s", out)
	}
}
