package anthropic

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
)

func pngOf(t *testing.T, w, h int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestPromptImages sends a prompt's images as image blocks after its text,
// scaled down to the API's edge when larger; one that cannot be decoded
// becomes a note instead of failing the request.
func TestPromptImages(t *testing.T) {
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	p := newProvider(t, s, Config{})
	small, big := pngOf(t, 10, 10), pngOf(t, 3136, 100)
	msg := provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		{Type: provider.PartText, Text: "look"},
		{Type: provider.PartImage, Content: []card.Content{card.Image("image/png", small), card.Image("image/png", big),
			card.Image("image/png", base64.StdEncoding.EncodeToString([]byte("junk")))}},
	}}
	if _, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{msg}}, nil); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Source struct {
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"messages"`
	}
	b, _ := json.Marshal(s.body(0))
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	c := body.Messages[0].Content
	if len(c) != 4 || c[0].Text != "look" || c[1].Type != "image" || c[1].Source.Data != small || c[2].Type != "image" || c[3].Type != "text" {
		t.Fatalf("content = %+v", c)
	}
	raw, _ := base64.StdEncoding.DecodeString(c[2].Source.Data)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != imageLimit.MaxEdge || cfg.Height != 50 {
		t.Errorf("the large image went as %dx%d (%v), want %dx50", cfg.Width, cfg.Height, err, imageLimit.MaxEdge)
	}
}

// TestThinkingLevels: the request's level wins over the configuration; an
// effort level is adaptive thinking with that effort.
func TestThinkingLevels(t *testing.T) {
	for _, tc := range []struct {
		cfg      int
		level    string
		thinking string // the thinking param's type, "" for none
		effort   string
		budget   float64
	}{
		{0, "", "", "", 0},
		{4096, "", "enabled", "", 4096},
		{4096, "off", "", "", 0},
		{0, "adaptive", "adaptive", "", 0},
		{0, "high", "adaptive", "high", 0},
		{ThinkingAdaptive, "8192", "enabled", "", 8192},
	} {
		s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
		p := newProvider(t, s, Config{Thinking: tc.cfg})
		if _, err := p.Stream(context.Background(), provider.Request{Thinking: tc.level, Messages: []provider.Message{userText("hi")}}, nil); err != nil {
			t.Fatal(err)
		}
		body := s.body(0)
		th, _ := body["thinking"].(map[string]any)
		oc, _ := body["output_config"].(map[string]any)
		typ, _ := th["type"].(string)
		budget, _ := th["budget_tokens"].(float64)
		effort, _ := oc["effort"].(string)
		if typ != tc.thinking || effort != tc.effort || budget != tc.budget {
			t.Errorf("config %d, level %q: thinking %v, output_config %v", tc.cfg, tc.level, th, oc)
		}
	}
	if _, err := (&Provider{}).params(provider.Request{Thinking: "lots"}); err == nil {
		t.Error("an unknown thinking level was sent")
	}
}
