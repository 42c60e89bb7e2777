package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
)

// TestPromptImages sends a prompt's images as image_url parts (data URLs)
// after its text.
func TestPromptImages(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	p := newProvider(t, s, Config{})
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(buf.Bytes())
	msg := provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		{Type: provider.PartText, Text: "look"},
		{Type: provider.PartImage, Content: []card.Content{card.Image("image/png", data)}},
	}}
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{msg}}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ := s.body(0)["messages"].([]any)
	user, _ := msgs[len(msgs)-1].(map[string]any)
	parts, _ := user["content"].([]any)
	if len(parts) != 2 {
		t.Fatalf("user content = %v", user["content"])
	}
	text, _ := parts[0].(map[string]any)
	img, _ := parts[1].(map[string]any)
	url, _ := img["image_url"].(map[string]any)
	if text["text"] != "look" || img["type"] != "image_url" || url["url"] != "data:image/png;base64,"+data {
		t.Errorf("parts = %v", parts)
	}
}

// TestThinkingLevels sends an effort level as reasoning_effort and nothing
// otherwise; a token budget is refused (Chat Completions has none).
func TestThinkingLevels(t *testing.T) {
	for level, want := range map[string]any{"": nil, "off": nil, "adaptive": nil, "low": "low", "max": "max"} {
		s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
		p := newProvider(t, s, Config{})
		if _, err := p.Stream(context.Background(), provider.Request{Thinking: level, Messages: []provider.Message{userText("hi")}}, nil); err != nil {
			t.Fatal(err)
		}
		if got := s.body(0)["reasoning_effort"]; got != want {
			t.Errorf("level %q: reasoning_effort %v, want %v", level, got, want)
		}
	}
	p := &Provider{}
	if _, err := p.params(provider.Request{Thinking: "4096"}); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a budget: %v", err)
	}
}
