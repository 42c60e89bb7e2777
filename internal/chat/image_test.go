package chat

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"
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

// A pasted path to an image (a screenshot dropped on the terminal) becomes an
// @ mention, relative inside the workspace, quoted when it has spaces; the
// host attaches it (its tests say how) from the text as typed.
func TestImagePastesAreMentions(t *testing.T) {
	h := newHarness(t, 80)
	writePNG(t, filepath.Join(h.root, "shot.png"))
	outside := t.TempDir()
	writePNG(t, filepath.Join(outside, "My Shot.png"))

	h.send(tea.PasteMsg{Content: filepath.Join(h.root, "shot.png")})
	if got := h.m.input.Value(); got != "@shot.png " {
		t.Fatalf("a pasted workspace image path should become a mention, input %q", got)
	}
	h.send(tea.PasteMsg{Content: "'" + filepath.Join(outside, "My Shot.png") + "'"})
	h.typeText(" what is this?")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	want := `@shot.png @"` + filepath.Join(outside, "My Shot.png") + `"  what is this?`
	if len(h.sess.texts) != 1 || h.sess.texts[0] != want {
		t.Errorf("the host was handed %q, want %q", h.sess.texts, want)
	}
}
