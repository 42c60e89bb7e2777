package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

// TestCapContentRunes: the cut counts and keeps runes across text blocks, multi-byte
// and invalid bytes included, as a cut of the text's rune slice would.
func TestCapContentRunes(t *testing.T) {
	content := []card.Content{card.Text("héllo\xff wörld "), {Type: card.ContentImage, Data: "AA==", MimeType: "image/png"}, card.Text(strings.Repeat("é", 30) + "\xfe€nd")}
	var all []rune
	for _, c := range content {
		if c.Type == "text" {
			all = append(all, []rune(c.Text)...)
		}
	}
	for _, limit := range []int{1, 7, 8, 20, 43} {
		head, tail := limit/2, limit-limit/2
		want := string(all[:head]) + fmt.Sprintf("\n\n… %d characters omitted (the output was capped at %d) …\n\n", len(all)-limit, limit) + string(all[len(all)-tail:])
		got := capContent(content, limit)
		if len(got) != 2 || got[0].Text != want || got[1].Type != card.ContentImage {
			t.Errorf("limit %d: got %q, want %q and the image", limit, got, want)
		}
	}
	if got := capContent(content, len(all)); len(got) != 3 {
		t.Errorf("content within the limit was cut: %q", got)
	}
}
