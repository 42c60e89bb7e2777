package vendors

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/remote"
)

// TestEntraCredentialsFromTheSpec: dsh takes AZURE_* out of the
// environment, so a service principal (secret or certificate) and workload
// identity reach Azure OpenAI only through the spec's variables. Each is
// exchanged for a token at a local Entra ID (its token endpoint as Entra
// documents it), which the request to the deployment then bears.
func TestEntraCredentialsFromTheSpec(t *testing.T) {
	for _, name := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"} {
		t.Setenv(name, "") // what the process's own environment would say is not what counts
	}
	const tenant, client = "00000000-0000-0000-0000-00000000000a", "00000000-0000-0000-0000-00000000000c"
	var mu sync.Mutex
	var forms []url.Values
	entra := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "https://" + r.Host + "/" + tenant
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/" + tenant + "/v2.0/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"token_endpoint":%q,"authorization_endpoint":%q,"issuer":%q}`,
				base+"/oauth2/v2.0/token", base+"/oauth2/v2.0/authorize", base+"/v2.0")
		case "/" + tenant + "/oauth2/v2.0/token":
			_ = r.ParseForm()
			mu.Lock()
			forms = append(forms, r.PostForm)
			mu.Unlock()
			fmt.Fprint(w, `{"token_type":"Bearer","expires_in":3600,"access_token":"entra-token-for-dsh"}`)
		default:
			t.Errorf("Entra ID asked for %s", r.URL)
			http.NotFound(w, r)
		}
	}))
	defer entra.Close()
	dir := t.TempDir()
	roots := filepath.Join(dir, "roots.pem")
	if err := os.WriteFile(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: entra.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", roots) // read at the process's first TLS handshake, this one

	deployment, auth := azureDeployment(t)

	federated := filepath.Join(dir, "token")
	if err := os.WriteFile(federated, []byte("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkc2gifQ.c2ln"), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := filepath.Join(dir, "sp.pem")
	if err := os.WriteFile(cert, selfSigned(t), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want func(url.Values) bool
	}{
		{"client secret", map[string]string{"AZURE_CLIENT_SECRET": "sp-secret"},
			func(f url.Values) bool { return f.Get("client_secret") == "sp-secret" }},
		{"client certificate", map[string]string{"AZURE_CLIENT_CERTIFICATE_PATH": cert},
			func(f url.Values) bool { return strings.Count(f.Get("client_assertion"), ".") == 2 }},
		{"workload identity", map[string]string{"AZURE_FEDERATED_TOKEN_FILE": federated},
			func(f url.Values) bool {
				return f.Get("client_assertion") == "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkc2gifQ.c2ln"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			forms = nil
			mu.Unlock()
			env := map[string]string{"AZURE_OPENAI_ENDPOINT": deployment.URL, "AZURE_TENANT_ID": tenant, "AZURE_CLIENT_ID": client,
				"AZURE_AUTHORITY_HOST": entra.URL}
			for k, v := range tc.env {
				env[k] = v
			}
			p, err := Backend{}.Build(remote.Spec{Backend: "azure", Model: "my-gpt", Env: env})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "hello"}}}}}
			if _, err := p.Stream(ctx, req, nil); err != nil {
				t.Fatal(err)
			}
			if got := auth(); len(got) != 1 || got[0] != "Bearer entra-token-for-dsh" {
				t.Errorf("the deployment was asked with %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(forms) != 1 {
				t.Fatalf("%d token requests", len(forms))
			}
			f := forms[0]
			if f.Get("grant_type") != "client_credentials" || f.Get("client_id") != client ||
				!strings.Contains(f.Get("scope"), "https://cognitiveservices.azure.com/.default") || !tc.want(f) {
				b, _ := json.Marshal(f)
				t.Errorf("token request %s", b)
			}
		})
	}
}

// selfSigned is a service principal's certificate and key, in PEM.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dsh-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})...)
}

// TestManagedIdentityFromTheSpec: a user-assigned managed identity, here an
// App Service's, is named by AZURE_CLIENT_ID and reached with the secret
// IDENTITY_HEADER, both taken out of dsh's environment and so of the
// runner's: they come in the spec, and the default chain still finds them.
func TestManagedIdentityFromTheSpec(t *testing.T) {
	const client, header = "00000000-0000-0000-0000-0000000000ee", "app-service-identity-secret"
	for _, name := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
		"AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST", "IDENTITY_HEADER", "MSI_SECRET", "MSI_ENDPOINT", "IDENTITY_SERVER_THUMBPRINT"} {
		t.Setenv(name, "") // hidden, as in the runner
	}
	var mu sync.Mutex
	var asked []*http.Request
	identity := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r)
		mu.Unlock()
		if r.Header.Get("X-IDENTITY-HEADER") != header || r.URL.Query().Get("client_id") != client {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"managed-identity-token","expires_on":"%d","resource":%q,"token_type":"Bearer","client_id":%q}`,
			time.Now().Add(time.Hour).Unix(), r.URL.Query().Get("resource"), client)
	}))
	defer identity.Close()
	t.Setenv("IDENTITY_ENDPOINT", identity.URL+"/msi/token") // not a secret: in the runner's environment
	deployment, auth := azureDeployment(t)
	p, err := Backend{}.Build(remote.Spec{Backend: "azure", Model: "my-gpt", Env: map[string]string{
		"AZURE_OPENAI_ENDPOINT": deployment.URL, "AZURE_CLIENT_ID": client, "IDENTITY_HEADER": header}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "hello"}}}}}
	if _, err := p.Stream(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0].URL.Query().Get("resource"), "https://cognitiveservices.azure.com") {
		t.Errorf("the identity endpoint was asked %d times (%v)", len(asked), asked)
	}
	if got := auth(); len(got) != 1 || got[0] != "Bearer managed-identity-token" {
		t.Errorf("the deployment was asked with %q", got)
	}
}

// azureDeployment is an Azure OpenAI deployment that answers "hi"; auth
// returns the Authorization of each request since the last call.
func azureDeployment(t *testing.T) (s *httptest.Server, auth func() []string) {
	var mu sync.Mutex
	var seen []string
	s = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		got := seen
		seen = nil
		return got
	}
}
