package openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/dsh-dev/dsh/internal/provider"
)

// entra is an Entra ID credential that hands out one token and records the
// scopes asked for.
type entra struct {
	mu     sync.Mutex
	scopes [][]string
}

func (e *entra) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.scopes = append(e.scopes, o.Scopes)
	return azcore.AccessToken{Token: "entra-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestAzureEntraToken: without a key, Azure OpenAI is asked with an Entra ID
// bearer token for Cognitive Services, at the deployment's path.
func TestAzureEntraToken(t *testing.T) {
	var auth, key, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		auth, key, path = r.Header.Get("Authorization"), r.Header.Get("Api-Key"), r.URL.Path+"?"+r.URL.RawQuery
		writeSSE(w, simpleText("hello")...)
	}))
	defer srv.Close()
	cred := &entra{}
	p, err := New(Config{Model: "my-deploy", Azure: &Azure{Endpoint: srv.URL, Token: cred}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "azure" {
		t.Errorf("Name() = %s", p.Name())
	}
	resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Parts[0].Text != "hello" {
		t.Errorf("response %+v", resp)
	}
	if auth != "Bearer entra-token" || key != "" || path != "/openai/deployments/my-deploy/chat/completions?api-version="+DefaultAzureAPIVersion {
		t.Errorf("Authorization %q Api-Key %q path %q", auth, key, path)
	}
	if len(cred.scopes) == 0 || !slices.Contains(cred.scopes[0], "https://cognitiveservices.azure.com/.default") {
		t.Errorf("scopes %v", cred.scopes)
	}
}

func TestAzureNeedsEndpointAndCredential(t *testing.T) {
	for _, cfg := range []Config{{Azure: &Azure{}, APIKey: "k"}, {Azure: &Azure{Endpoint: "https://r.openai.azure.com"}}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg.Azure)
		}
	}
}
