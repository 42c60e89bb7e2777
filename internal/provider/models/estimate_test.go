package models

import (
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
)

func TestEstimate(t *testing.T) {
	text := func(s string) provider.Message {
		return provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: s}}}
	}
	small := provider.Request{System: "be brief", Messages: []provider.Message{text("hi")}}
	big := provider.Request{System: "be brief", Messages: []provider.Message{text("hi"), text(strings.Repeat("word ", 4000))}}
	if s, b := Estimate(small), Estimate(big); s <= 0 || b-s < 4000 || b-s > 6000 {
		t.Errorf("Estimate: small %d, big %d; 20000 bytes more should be about 5000 tokens more", s, b)
	}
	if got, want := Estimate(big)-Estimate(small), EstimateMessage(big.Messages[1]); got != want {
		t.Errorf("a request's estimate is not the sum of its messages': %d vs %d", got, want)
	}
	img := provider.Message{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartToolResult, ID: "t1",
		Content: []card.Content{card.Image("image/png", strings.Repeat("A", 400_000))}}}}
	if n := EstimateMessage(img); n < imageTokens || n > imageTokens+100 {
		t.Errorf("an image costs %d, want about %d whatever its base64 size", n, imageTokens)
	}
	withTools := small
	withTools.Tools = []provider.ToolDef{{Name: "read", Description: strings.Repeat("d", 400), Schema: []byte(`{"type":"object"}`)}}
	if Estimate(withTools)-Estimate(small) < 100 {
		t.Error("tool definitions are not counted")
	}
}
