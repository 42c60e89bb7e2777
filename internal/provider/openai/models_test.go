package openai

import "testing"

func TestChatModelFilter(t *testing.T) {
	for id, want := range map[string]bool{
		"gpt-5": true, "gpt-4o-mini": true, "o3": true, "o4-mini": true, "gpt-5.5-2026-04-23": true,
		"text-embedding-3-small": false, "gpt-4o-audio-preview": false, "gpt-4o-realtime-preview": false,
		"dall-e-3": false, "whisper-1": false, "omni-moderation-latest": false, "gpt-image-1": false,
		"tts-1": false, "davinci-002": false,
	} {
		if got := chatModel(id); got != want {
			t.Errorf("chatModel(%q) = %v, want %v", id, got, want)
		}
	}
}
