package openai

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/dsh-dev/dsh/internal/provider/models"
)

// listTimeout bounds one listing: it happens while a session starts.
const listTimeout = 15 * time.Second

// Models lists the models cfg reaches, with the table's figures merged in.
// OpenAI's own list is cut to the models that can hold a conversation; a
// local server's is its own.
func Models(ctx context.Context, cfg Config) ([]models.Info, error) {
	svc := sdk.NewModelService(append(cfg.options(), option.WithMaxRetries(1), option.WithRequestTimeout(listTimeout))...)
	official := cfg.BaseURL == "" || strings.HasPrefix(cfg.BaseURL, "https://api.openai.com/")
	var out []models.Info
	pager := svc.ListAutoPaging(ctx)
	for pager.Next() {
		m := pager.Current()
		if official && !chatModel(m.ID) {
			continue
		}
		i := models.Lookup(m.ID)
		if i.Provider == "" {
			i.Provider = "openai"
		}
		out = append(out, i)
	}
	if err := pager.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// FirstServed returns the first model the OpenAI-compatible server at
// cfg.BaseURL lists: the model to use when none is configured, since a local
// server (ollama, llama.cpp, vLLM) serves its own models and not OpenAI's
// default. It fails rather than guess when the server lists none.
func FirstServed(ctx context.Context, cfg Config) (string, error) {
	ms, err := Models(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("asking %s for its models (name one with --model): %w", cfg.BaseURL, err)
	}
	if len(ms) == 0 {
		return "", fmt.Errorf("%s serves no models (name one with --model)", cfg.BaseURL)
	}
	return ms[0].ID, nil
}

// chatModel reports whether a model OpenAI lists can hold a coding
// conversation: its list also holds embedding, audio, image and moderation
// models, which a model picker should not offer.
func chatModel(id string) bool {
	if !notChat().MatchString(id) && chatFamily().MatchString(id) {
		return true
	}
	return models.Lookup(id).Known
}

var (
	chatFamily = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(gpt-|o[0-9]|chatgpt-)`) })
	notChat    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`embedding|audio|realtime|tts|transcribe|image|dall-e|whisper|moderation|search|instruct`)
	})
)
