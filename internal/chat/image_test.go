package chat

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/card"
)

func writePNG(t *testing.T, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// An @image is sent as an image block that names its file; a pasted path to an
// image (a screenshot dropped on the terminal) becomes such a mention, also
// from outside the workspace, where a text file is still refused.
func TestImageAttachments(t *testing.T) {
	h := newHarness(t, 80)
	writePNG(t, filepath.Join(h.root, "shot.png"))
	outside := t.TempDir()
	writePNG(t, filepath.Join(outside, "My Shot.png"))
	if err := os.WriteFile(filepath.Join(outside, "notes.png"), []byte("not an image"), 0o644); err != nil {
		t.Fatal(err)
	}

	h.send(tea.PasteMsg{Content: filepath.Join(h.root, "shot.png")})
	if got := h.m.input.Value(); got != "@shot.png " {
		t.Fatalf("a pasted workspace image path should become a mention, input %q", got)
	}
	h.send(tea.PasteMsg{Content: "'" + filepath.Join(outside, "My Shot.png") + "'"})
	h.send(tea.PasteMsg{Content: filepath.Join(outside, "notes.png")})
	h.typeText(" what is this?")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	if len(h.sess.parts) != 1 {
		t.Fatalf("want one prompt, got %d; printed:\n%s", len(h.sess.parts), h.printed.String())
	}
	var uris []string
	for _, c := range h.sess.parts[0] {
		if c.Type != card.ContentImage || c.MimeType != "image/png" || c.Data == "" {
			t.Errorf("want PNG image blocks only, got %+v", c)
		}
		uris = append(uris, c.URI)
	}
	if want := []string{"shot.png", filepath.Join(outside, "My Shot.png")}; strings.Join(uris, "|") != strings.Join(want, "|") {
		t.Errorf("attached %q, want %q", uris, want)
	}
	if p := strings.Join(strings.Fields(h.printed.String()), " "); !strings.Contains(p, "not attached: @"+filepath.Join(outside, "notes.png")+": not a path in the workspace") {
		t.Errorf("a text file outside the workspace must be refused with a note; printed:\n%s", p)
	}
}
