package models

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// Source says where to list models: the provider ("anthropic" or "openai")
// and its credentials, read from the environment or configuration by the
// caller, as for the provider itself.
type Source struct {
	Provider   string
	APIKey     string
	BaseURL    string       // empty: the vendor's production endpoint
	HTTPClient *http.Client // nil: http.DefaultClient
}

// listTimeout bounds one listing: it happens while a session starts.
const listTimeout = 15 * time.Second

// List returns the models the provider serves, with the table's figures
// merged in (and Anthropic's own limits, which its API reports). When the call
// fails it returns the built-in list of that provider together with the
// error, so the caller can both carry on and say why the list is not live.
func List(ctx context.Context, src Source) ([]Info, error) {
	var live []Info
	var err error
	switch src.Provider {
	case "anthropic":
		live, err = listAnthropic(ctx, src)
	case "openai":
		live, err = listOpenAI(ctx, src)
	default:
		return nil, fmt.Errorf("models: cannot list the models of provider %q", src.Provider)
	}
	if err == nil && len(live) == 0 {
		err = errors.New("the server lists no models")
	}
	if err != nil {
		return Builtin(src.Provider), fmt.Errorf("listing the %s models (showing the built-in list): %w", src.Provider, err)
	}
	return live, nil
}

// FirstServed returns the first model the OpenAI-compatible server at
// src.BaseURL lists: the model to use when none is configured, since a local
// server (ollama, llama.cpp, vLLM) serves its own models and not OpenAI's
// default. It fails rather than guess when the server lists none.
func FirstServed(ctx context.Context, src Source) (string, error) {
	ms, err := listOpenAI(ctx, src)
	if err != nil {
		return "", fmt.Errorf("asking %s for its models (name one with --model): %w", src.BaseURL, err)
	}
	if len(ms) == 0 {
		return "", fmt.Errorf("%s serves no models (name one with --model)", src.BaseURL)
	}
	return ms[0].ID, nil
}

func httpClient(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

func listAnthropic(ctx context.Context, src Source) ([]Info, error) {
	// Built without anthropic.NewClient, as the provider is.
	opts := []aoption.RequestOption{
		aoption.WithEnvironmentProduction(),
		aoption.WithHTTPClient(httpClient(src.HTTPClient)),
		aoption.WithMaxRetries(1),
		aoption.WithRequestTimeout(listTimeout),
	}
	if src.APIKey != "" {
		opts = append(opts, aoption.WithAPIKey(src.APIKey))
	}
	if src.BaseURL != "" {
		opts = append(opts, aoption.WithBaseURL(src.BaseURL))
	}
	svc := anthropic.NewModelService(opts...)
	var out []Info
	pager := svc.ListAutoPaging(ctx, anthropic.ModelListParams{})
	for pager.Next() {
		m := pager.Current()
		if m.Lifecycle == anthropic.ModelInfoLifecycleRetired {
			continue
		}
		i := Lookup(m.ID)
		i.Provider = "anthropic"
		if m.DisplayName != "" {
			i.Name = m.DisplayName
		}
		// The API's own limits are the truth for this account and model.
		if m.MaxInputTokens > 0 {
			i.ContextWindow, i.Known = m.MaxInputTokens, true
		}
		if m.MaxTokens > 0 {
			i.MaxOutput = m.MaxTokens
		}
		out = append(out, i)
	}
	if err := pager.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func listOpenAI(ctx context.Context, src Source) ([]Info, error) {
	// Built without openai.NewClient, which would read OPENAI_* behind the
	// caller's back (as the provider does).
	opts := []ooption.RequestOption{
		ooption.WithEnvironmentProduction(),
		ooption.WithHTTPClient(httpClient(src.HTTPClient)),
		ooption.WithMaxRetries(1),
		ooption.WithRequestTimeout(listTimeout),
	}
	if src.APIKey != "" {
		opts = append(opts, ooption.WithAPIKey(src.APIKey))
	}
	if src.BaseURL != "" {
		opts = append(opts, ooption.WithBaseURL(src.BaseURL))
	}
	svc := openai.NewModelService(opts...)
	official := src.BaseURL == "" || strings.HasPrefix(src.BaseURL, "https://api.openai.com/")
	var out []Info
	pager := svc.ListAutoPaging(ctx)
	for pager.Next() {
		m := pager.Current()
		if official && !chatModel(m.ID) {
			continue
		}
		i := Lookup(m.ID)
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

// chatModel reports whether a model OpenAI lists can hold a coding
// conversation: its list also holds embedding, audio, image and moderation
// models, which a model picker should not offer.
func chatModel(id string) bool {
	if !notChat().MatchString(id) && chatFamily().MatchString(id) {
		return true
	}
	return Lookup(id).Known
}

var (
	chatFamily = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(gpt-|o[0-9]|chatgpt-)`) })
	notChat    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`embedding|audio|realtime|tts|transcribe|image|dall-e|whisper|moderation|search|instruct`)
	})
)
