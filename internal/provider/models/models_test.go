package models

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		model    string
		wantFrom string // the table entry it must resolve to; "" for the default
	}{
		{"claude-sonnet-5-5", "claude-sonnet-5-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"anthropic/claude-opus-4-1", "claude-opus-4-1"},
		{"claude-opus-4", "claude-opus-4"},
		{"claude-opus-4-1", "claude-opus-4-1"}, // not claude-opus-4 + "-1"
		{"claude-opus-4-7", ""},                // a newer model, not a snapshot of claude-opus-4
		{"claude-sonnet-4-6", ""},
		{"gpt-5", "gpt-5"},
		{"gpt-5-mini", "gpt-5-mini"},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"gpt-5.5-2026-04-23", "gpt-5.5"},
		{"gpt-5.4", ""}, // not gpt-5
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-audio-preview", ""},
		{"llama3.1:8b", ""},
		{"", ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			got := Lookup(tc.model)
			if got.ID != tc.model {
				t.Errorf("ID = %q, want the name asked for", got.ID)
			}
			if tc.wantFrom == "" {
				if got.Known || got.Priced || got.ContextWindow != DefaultContextWindow || got.MaxOutput != DefaultMaxOutput {
					t.Errorf("an unknown model got %+v, want the defaults", got)
				}
				return
			}
			want := entry(t, tc.wantFrom)
			want.ID = tc.model
			if got != want {
				t.Errorf("Lookup(%q) = %+v, want %+v", tc.model, got, want)
			}
		})
	}
}

func entry(t *testing.T, id string) Info {
	t.Helper()
	for _, e := range table {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no table entry %q", id)
	return Info{}
}

// TestTable checks the table's own consistency: a typo in a figure that makes
// it impossible (output over the window, a price without a rate) fails here.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range table {
		if seen[e.ID] {
			t.Errorf("%s twice", e.ID)
		}
		seen[e.ID] = true
		if e.Provider != "anthropic" && e.Provider != "openai" {
			t.Errorf("%s: provider %q", e.ID, e.Provider)
		}
		if !e.Known || e.ContextWindow < 100_000 || e.MaxOutput < 4096 || e.MaxOutput > e.ContextWindow {
			t.Errorf("%s: window %d, output %d", e.ID, e.ContextWindow, e.MaxOutput)
		}
		if e.Priced && (e.InputPrice <= 0 || e.OutputPrice < e.InputPrice) {
			t.Errorf("%s: price %v in, %v out", e.ID, e.InputPrice, e.OutputPrice)
		}
		if !e.Priced && (e.InputPrice != 0 || e.OutputPrice != 0) {
			t.Errorf("%s: unpriced but has a price", e.ID)
		}
		if got := Lookup(e.ID); got != e {
			t.Errorf("Lookup(%s) = %+v, want its own entry", e.ID, got)
		}
	}
	if len(Builtin("anthropic")) == 0 || len(Builtin("openai")) == 0 || len(Builtin("")) != len(table) {
		t.Error("Builtin does not split the table by provider")
	}
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		model string
		u     Usage
		want  float64
		ok    bool
	}{
		{"claude-sonnet-4-5", Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 18, true},
		{"claude-sonnet-4-5-20250929", Usage{InputTokens: 2000, OutputTokens: 500}, 0.006 + 0.0075, true},
		{"claude-opus-5-5", Usage{InputTokens: 10_000, OutputTokens: 1000}, 0.04 + 0.02, true},
		{"gpt-4o-mini", Usage{InputTokens: 1_000_000}, 0.15, true},
		{"claude-haiku-5-5", Usage{InputTokens: 1000}, 0, false},
		{"llama3", Usage{InputTokens: 1000}, 0, false},
	} {
		got, ok := Cost(tc.model, tc.u)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v, %v; want %v, %v", tc.model, tc.u, got, ok, tc.want, tc.ok)
		}
	}
}

// anthropicServer serves /v1/models in pages of one, checking the key.
func anthropicServer(t *testing.T, models []map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The SDK sends the key as a bearer token (older versions: X-Api-Key).
		key := r.Header.Get("X-Api-Key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path != "/v1/models" || key != "test-key" {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"no"}}`, http.StatusUnauthorized)
			return
		}
		i := 0
		if after := r.URL.Query().Get("after_id"); after != "" {
			for i < len(models) && models[i]["id"] != after {
				i++
			}
			i++
		}
		page := models[min(i, len(models)):min(i+1, len(models))]
		body := map[string]any{"data": page, "has_more": i+1 < len(models)}
		if len(page) > 0 {
			body["first_id"], body["last_id"] = page[0]["id"], page[0]["id"]
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func anthropicModel(id, lifecycle string, window, out int) map[string]any {
	return map[string]any{"id": id, "type": "model", "display_name": "Display " + id, "created_at": "2026-01-01T00:00:00Z",
		"lifecycle": lifecycle, "max_input_tokens": window, "max_tokens": out}
}

func TestListAnthropic(t *testing.T) {
	srv := anthropicServer(t, []map[string]any{
		anthropicModel("claude-sonnet-5-5", "active", 1_000_000, 128_000),
		anthropicModel("claude-old", "retired", 100_000, 4096),
		anthropicModel("claude-new-7", "active", 2_000_000, 256_000),
	})
	got, err := List(context.Background(), Source{Provider: "anthropic", APIKey: "test-key", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d models, want 2 (the retired one left out, all pages read): %+v", len(got), got)
	}
	if g := got[0]; g.ID != "claude-sonnet-5-5" || !g.Priced || g.InputPrice != 2 || g.Name != "Display claude-sonnet-5-5" {
		t.Errorf("known model = %+v, want the table's price and the API's name", g)
	}
	if g := got[1]; g.ID != "claude-new-7" || g.ContextWindow != 2_000_000 || g.MaxOutput != 256_000 || !g.Known || g.Priced {
		t.Errorf("new model = %+v, want the API's limits, unpriced", g)
	}

	// A rejected key falls back to the built-in list, and says so.
	got, err = List(context.Background(), Source{Provider: "anthropic", APIKey: "wrong", BaseURL: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("a failed listing: err = %v", err)
	}
	if len(got) != len(Builtin("anthropic")) || got[0].Provider != "anthropic" {
		t.Errorf("fallback = %d models, want the built-in Anthropic list", len(got))
	}
}

// openAIServer serves an OpenAI-compatible /v1/models.
func openAIServer(t *testing.T, ids ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		if auth := r.Header.Get("Authorization"); auth != "" && auth != "Bearer local-key" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		data := []map[string]any{}
		for _, id := range ids {
			data = append(data, map[string]any{"id": id, "object": "model", "created": 1, "owned_by": "library"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestListOpenAICompatible(t *testing.T) {
	srv, _ := openAIServer(t, "qwen3-coder:30b", "gpt-4o", "nomic-embed-text")
	got, err := List(context.Background(), Source{Provider: "openai", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	// A local server's list is its own: nothing is filtered out.
	if strings.Join(ids, " ") != "qwen3-coder:30b gpt-4o nomic-embed-text" {
		t.Errorf("ids = %q", ids)
	}
	if got[0].Known || got[0].ContextWindow != DefaultContextWindow || !got[1].Priced {
		t.Errorf("figures: %+v", got[:2])
	}

	first, err := FirstServed(context.Background(), Source{Provider: "openai", BaseURL: srv.URL + "/v1", APIKey: "local-key"})
	if err != nil || first != "qwen3-coder:30b" {
		t.Errorf("FirstServed = %q, %v; want the server's first model", first, err)
	}
}

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

func TestFirstServedFails(t *testing.T) {
	empty, _ := openAIServer(t)
	if _, err := FirstServed(context.Background(), Source{Provider: "openai", BaseURL: empty.URL + "/v1"}); err == nil ||
		!strings.Contains(err.Error(), "serves no models") {
		t.Errorf("an empty list: err = %v", err)
	}
	rejecting, _ := openAIServer(t, "m")
	if _, err := FirstServed(context.Background(), Source{Provider: "openai", BaseURL: rejecting.URL + "/v1", APIKey: "wrong"}); err == nil ||
		!strings.Contains(err.Error(), "--model") {
		t.Errorf("a rejected key: err = %v", err)
	}
	// A server that is not there: an error, never a guessed model.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if m, err := FirstServed(context.Background(), Source{Provider: "openai", BaseURL: gone.URL + "/v1"}); err == nil {
		t.Errorf("a dead server gave %q", m)
	}
}

func TestListUnknownProvider(t *testing.T) {
	if _, err := List(context.Background(), Source{Provider: "script"}); err == nil {
		t.Error("listing the script provider's models succeeded")
	}
}
