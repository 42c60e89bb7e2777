package attach

import (
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

func TestImageChip(t *testing.T) {
	img := card.Image("image/png", strings.Repeat("A", 4096)) // 3 KiB decoded
	img.URI = "shot.png"
	chips := ImageChips([]card.Content{img, card.Resource("a.go", "x"), card.Image("image/jpeg", "AAAA")})
	want := []string{"attached shot.png (image/png, 3 KiB)", "attached an image (image/jpeg, 1 KiB)"}
	if strings.Join(chips, "|") != strings.Join(want, "|") {
		t.Errorf("chips %q, want %q", chips, want)
	}
}
