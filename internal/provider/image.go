package provider

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"slices"
	"sync"

	// The formats editors attach, registered for image.Decode.
	_ "image/gif"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/dsh-dev/dsh/internal/card"
)

// ImageLimit is what a provider accepts of one image.
type ImageLimit struct {
	MaxEdge  int      // the longest side in pixels
	MaxBytes int      // the size of the base64 data
	Types    []string // the MIME types it takes; anything else is re-encoded
}

// fitCache remembers the last images fitted: every model call of a turn sends
// the conversation again, and scaling a screenshot is not free.
var fitCache = struct {
	sync.Mutex
	m map[[sha256.Size]byte]card.Content
}{m: map[[sha256.Size]byte]card.Content{}}

const fitCacheSize = 16

// FitImage returns an image block within l: as it is when it fits, else
// scaled down with its aspect ratio kept and re-encoded — PNG stays PNG
// (screenshots of text) unless it is still too large, anything else becomes
// JPEG. An image that cannot be decoded is an error the caller turns into a
// note for the model.
func FitImage(c card.Content, l ImageLimit) (card.Content, error) {
	raw, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return c, fmt.Errorf("image: bad base64: %w", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return c, fmt.Errorf("image (%s): %w", c.MimeType, err)
	}
	if max(cfg.Width, cfg.Height) <= l.MaxEdge && len(c.Data) <= l.MaxBytes && slices.Contains(l.Types, c.MimeType) {
		return c, nil
	}
	key := sha256.Sum256(append([]byte(fmt.Sprintf("%d/%d/%v/", l.MaxEdge, l.MaxBytes, l.Types)), c.Data...))
	fitCache.Lock()
	out, ok := fitCache.m[key]
	fitCache.Unlock()
	if ok {
		return out, nil
	}
	out, err = fit(raw, c.MimeType, cfg, l)
	if err != nil {
		return c, err
	}
	fitCache.Lock()
	if len(fitCache.m) >= fitCacheSize {
		clear(fitCache.m)
	}
	fitCache.m[key] = out
	fitCache.Unlock()
	return out, nil
}

func fit(raw []byte, mime string, cfg image.Config, l ImageLimit) (card.Content, error) {
	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return card.Content{}, fmt.Errorf("image (%s): %w", mime, err)
	}
	w, h := cfg.Width, cfg.Height
	if long := max(w, h); long > l.MaxEdge {
		w, h = max(1, w*l.MaxEdge/long), max(1, h*l.MaxEdge/long)
	}
	for {
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)
		var buf bytes.Buffer
		outMime := "image/jpeg"
		if mime == "image/png" && slices.Contains(l.Types, "image/png") {
			outMime = "image/png"
			err = png.Encode(&buf, dst)
		} else {
			err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85})
		}
		if err != nil {
			return card.Content{}, fmt.Errorf("image: encoding: %w", err)
		}
		data := base64.StdEncoding.EncodeToString(buf.Bytes())
		if len(data) <= l.MaxBytes || max(w, h) <= 64 {
			return card.Image(outMime, data), nil
		}
		if outMime == "image/png" { // too large as PNG: try JPEG at this size first
			mime = "image/jpeg"
			continue
		}
		w, h = max(1, w*3/4), max(1, h*3/4)
	}
}
