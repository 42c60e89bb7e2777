package chat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dsh-dev/dsh/internal/command"
)

// The / palette opens on / at the start of the input, lists the chat's
// commands (built-in and custom, with their descriptions), filters fuzzily as
// the name is typed, and takes ↑/↓, Enter, Tab and Esc.
func TestPalette(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"review.md":    "---\ndescription: review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS carefully.\n",
		"changelog.md": "---\ndescription: write the changelog entry\n---\nWrite the changelog entry.\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmds, err := command.All([]command.Dir{{Path: dir}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 100)
	h.sess.custom = cmds
	h.m.attach(Opened{Session: h.sess, Registry: h.m.reg})
	names := func() []string {
		var out []string
		for _, it := range h.m.palette.shown() {
			out = append(out, it.label)
		}
		return out
	}

	h.typeText("/")
	if h.m.palette == nil {
		t.Fatal("/ should open the palette")
	}
	if got := len(names()); got != len(h.m.commands()) {
		t.Errorf("the palette lists %d commands, the chat has %d", got, len(h.m.commands()))
	}
	h.typeText("chan")
	if v := ansi.Strip(h.m.View().Content); !strings.Contains(v, "/changelog") || !strings.Contains(v, "write the changelog entry") {
		t.Errorf("a custom command shows with its description:\n%s", v)
	}
	for range 4 {
		h.send(key(tea.KeyBackspace, 0))
	}
	h.typeText("mo")
	if got := names(); len(got) < 2 || got[0] != "/mode" || got[1] != "/model" {
		t.Errorf("/mo lists %q, want /mode then /model first", got)
	}
	h.typeText("dl") // fuzzy: m-o-d-l
	if got := names(); !slices.Equal(got, []string{"/model"}) {
		t.Errorf("/modl lists %q", got)
	}
	h.send(key(tea.KeyBackspace, 0), key(tea.KeyBackspace, 0))
	h.send(key(tea.KeyDown, 0))
	h.send(key(tea.KeyEnter, 0))
	h.send(h.runLast()...)
	if h.m.palette != nil || !slices.Equal(h.sess.commands, []string{"/model "}) {
		t.Errorf("Enter on /model should run it in the host: palette open %v, ran %q", h.m.palette != nil, h.sess.commands)
	}

	// Esc closes the list and leaves the input; it stays closed until the
	// input is emptied.
	h.typeText("/co")
	h.send(key(tea.KeyEscape, 0))
	h.typeText("s")
	if h.m.palette != nil || h.m.input.Value() != "/cos" || h.sess.cancels != 0 {
		t.Errorf("after Esc: palette open %v, input %q, cancels %d", h.m.palette != nil, h.m.input.Value(), h.sess.cancels)
	}
	for range 4 {
		h.send(key(tea.KeyBackspace, 0))
	}
	h.typeText("/rev")
	if h.m.palette == nil {
		t.Fatal("the palette opens again once the input was emptied")
	}
	// A command that needs an argument is put in the input for it; Tab
	// completes any command.
	h.send(key(tea.KeyEnter, 0))
	if got := h.m.input.Value(); got != "/review " || h.m.running {
		t.Errorf("Enter on /review <file>: input %q, running %v", got, h.m.running)
	}
	h.m.input.Reset()
	h.typeText("/chlog")
	h.send(key(tea.KeyTab, 0))
	if got := h.m.input.Value(); got != "/changelog " || h.m.palette != nil {
		t.Errorf("Tab: input %q, palette open %v", got, h.m.palette != nil)
	}
	// A slash that does not start the input is text.
	h.m.input.Reset()
	h.typeText("a/b")
	if h.m.palette != nil {
		t.Error("a / inside the text opened the palette")
	}
}
