package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/models"
)

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
	got, err := Models(context.Background(), "anthropic", env(map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}))
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
	got, err = Models(context.Background(), "anthropic", env(map[string]string{"ANTHROPIC_API_KEY": "wrong", "ANTHROPIC_BASE_URL": srv.URL}))
	if err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("a failed listing: err = %v", err)
	}
	if len(got) != len(models.Builtin("anthropic")) || got[0].Provider != "anthropic" {
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
	got, err := Models(context.Background(), "openai", env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1"}))
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
	if got[0].Known || got[0].ContextWindow != models.DefaultContextWindow || !got[1].Priced {
		t.Errorf("figures: %+v", got[:2])
	}

	first, why, err := DefaultModel(context.Background(), "openai", env(map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "local-key"}))
	if err != nil || first != "qwen3-coder:30b" || why != "default (the first model the server lists)" {
		t.Errorf("DefaultModel = %q (%s), %v; want the server's first model", first, why, err)
	}
}

func TestDefaultModelFails(t *testing.T) {
	empty, _ := openAIServer(t)
	if _, _, err := DefaultModel(context.Background(), "openai", env(map[string]string{"OPENAI_BASE_URL": empty.URL + "/v1"})); err == nil ||
		!strings.Contains(err.Error(), "serves no models") {
		t.Errorf("an empty list: err = %v", err)
	}
	rejecting, _ := openAIServer(t, "m")
	if _, _, err := DefaultModel(context.Background(), "openai", env(map[string]string{"OPENAI_BASE_URL": rejecting.URL + "/v1", "OPENAI_API_KEY": "wrong"})); err == nil ||
		!strings.Contains(err.Error(), "--model") {
		t.Errorf("a rejected key: err = %v", err)
	}
	// A server that is not there: an error, never a guessed model.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if m, _, err := DefaultModel(context.Background(), "openai", env(map[string]string{"OPENAI_BASE_URL": gone.URL + "/v1"})); err == nil {
		t.Errorf("a dead server gave %q", m)
	}
}

// A provider with no list of its own offers the whole table.
func TestModelsWithoutAList(t *testing.T) {
	got, err := Models(context.Background(), "script", env(nil))
	if err != nil || len(got) != len(models.Builtin("")) {
		t.Errorf("script: %d models, %v; want the whole table", len(got), err)
	}
}
