package provider

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

func encoded(t *testing.T, w, h int, asPNG bool) card.Content {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: uint8(x), G: 100, B: 200, A: 255})
	}
	var buf bytes.Buffer
	mime := "image/jpeg"
	var err error
	if asPNG {
		mime, err = "image/png", png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return card.Image(mime, base64.StdEncoding.EncodeToString(buf.Bytes()))
}

func size(t *testing.T, c card.Content) (int, int) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

func TestFitImage(t *testing.T) {
	web := []string{"image/jpeg", "image/png", "image/gif", "image/webp"}
	small := encoded(t, 40, 30, true)
	for _, tc := range []struct {
		name     string
		in       card.Content
		limit    ImageLimit
		mime     string
		w, h     int
		same     bool
		wantFail bool
	}{
		{"fits", small, ImageLimit{MaxEdge: 100, MaxBytes: 1 << 20, Types: web}, "image/png", 40, 30, true, false},
		{"too wide keeps aspect and PNG", encoded(t, 3000, 1000, true), ImageLimit{MaxEdge: 1500, MaxBytes: 5 << 20, Types: web}, "image/png", 1500, 500, false, false},
		{"too tall JPEG", encoded(t, 500, 2000, false), ImageLimit{MaxEdge: 1000, MaxBytes: 5 << 20, Types: web}, "image/jpeg", 250, 1000, false, false},
		{"too many bytes shrinks", encoded(t, 800, 800, true), ImageLimit{MaxEdge: 2000, MaxBytes: 3000, Types: web}, "image/jpeg", 0, 0, false, false},
		{"a type the API does not take", small, ImageLimit{MaxEdge: 100, MaxBytes: 1 << 20, Types: []string{"image/jpeg"}}, "image/jpeg", 40, 30, false, false},
		{"not an image", card.Image("image/png", base64.StdEncoding.EncodeToString([]byte("not a png"))), ImageLimit{MaxEdge: 100, MaxBytes: 1 << 20, Types: web}, "", 0, 0, false, true},
		{"bad base64", card.Image("image/png", "%%%"), ImageLimit{MaxEdge: 100, MaxBytes: 1 << 20, Types: web}, "", 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FitImage(tc.in, tc.limit)
			if tc.wantFail {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.same != (got == tc.in) {
				t.Errorf("returned the input unchanged: %v, want %v", got == tc.in, tc.same)
			}
			if got.MimeType != tc.mime || len(got.Data) > tc.limit.MaxBytes {
				t.Errorf("got %s of %d bytes (limit %d), want %s", got.MimeType, len(got.Data), tc.limit.MaxBytes, tc.mime)
			}
			w, h := size(t, got)
			if max(w, h) > tc.limit.MaxEdge || (tc.w > 0 && (w != tc.w || h != tc.h)) {
				t.Errorf("got %dx%d, want %dx%d within %d", w, h, tc.w, tc.h, tc.limit.MaxEdge)
			}
			again, err := FitImage(tc.in, tc.limit) // from the cache
			if err != nil || again != got {
				t.Error("fitting the same image again gave something else")
			}
		})
	}
}
