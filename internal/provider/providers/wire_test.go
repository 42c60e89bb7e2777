package providers

// One scripted task — the model reads a file with a tool, then answers — run
// through every provider against a test server that speaks that provider's
// wire protocol as its reference documents it, with the credentials each
// cloud checks: an API key, a SigV4 signature, a Google OAuth bearer token,
// an Azure Api-Key. The task's history, as the session log keeps it, is then
// sent again by a provider built afresh (a reloaded session): the request
// must be byte for byte the one sent before.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
)

// Anthropic's Messages stream: the task's two turns.
func anthropicEvents(turn int) []string {
	ev := func(typ, data string) string { return typ + "\x00" + data }
	start := ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}`)
	if turn == 0 {
		return []string{start,
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read it first."}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnLTE="}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
			ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"call_1","name":"read","input":{}}}`),
			ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.go\"}"}}`),
			ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`),
			ev("message_stop", `{"type":"message_stop"}`),
		}
	}
	return []string{start,
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a.go is package a."}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	}
}

func writeAnthropicSSE(w http.ResponseWriter, turn int) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range anthropicEvents(turn) {
		typ, data, _ := strings.Cut(e, "\x00")
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	}
}

// writeBedrockStream writes the same events as Bedrock's
// InvokeModelWithResponseStream does: AWS event-stream messages whose
// "chunk" payload holds the event's JSON in base64.
func writeBedrockStream(t *testing.T, w http.ResponseWriter, turn int) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	enc := eventstream.NewEncoder()
	for _, e := range anthropicEvents(turn) {
		_, data, _ := strings.Cut(e, "\x00")
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(data))})
		var h eventstream.Headers
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue("chunk"))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		if err := enc.Encode(w, eventstream.Message{Headers: h, Payload: payload}); err != nil {
			t.Errorf("encoding an event: %v", err)
		}
	}
}

// Chat Completions' stream.
func writeChatSSE(w http.ResponseWriter, turn int) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, finish)
	}
	if turn == 0 {
		chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}`, "null")
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.go\"}"}}]}`, "null")
		chunk(`{}`, `"tool_calls"`)
	} else {
		chunk(`{"role":"assistant","content":"a.go is package a."}`, "null")
		chunk(`{}`, `"stop"`)
	}
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`+"\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// The Responses API's stream.
func writeResponsesSSE(w http.ResponseWriter, turn int) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(typ, fields string) {
		fmt.Fprintf(w, "event: %s\ndata: {\"type\":%q,\"sequence_number\":1%s}\n\n", typ, typ, fields)
	}
	done := func(items ...string) {
		ev("response.completed", `,"response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[`+
			strings.Join(items, ",")+`],"usage":{"input_tokens":12,"output_tokens":5,"total_tokens":17}}`)
	}
	if turn == 0 {
		reasoning := `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Read it first."}],"encrypted_content":"gAAAA-enc"}`
		call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","status":"completed"}`
		ev("response.reasoning_summary_part.added", `,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`)
		ev("response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Read it first."`)
		ev("response.output_item.done", `,"output_index":0,"item":`+reasoning)
		ev("response.output_item.added", `,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":""}`)
		ev("response.output_item.done", `,"output_index":1,"item":`+call)
		done(reasoning, call)
		return
	}
	msg := `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"a.go is package a.","annotations":[]}]}`
	ev("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"a.go is package a."`)
	done(msg)
}

// wireCase is one provider and its test server's checks.
type wireCase struct {
	name     string
	provider string // Provider.Name()
	path     string // the request's path, turn 0
	env      func(t *testing.T, url string) map[string]string
	flags    Flags
	check    func(t *testing.T, r *http.Request, body []byte) // the credential
	answer   func(t *testing.T, w http.ResponseWriter, turn int)
}

func wireCases(t *testing.T) []wireCase {
	bearer := func(want string) func(*testing.T, *http.Request, []byte) {
		return func(t *testing.T, r *http.Request, _ []byte) {
			if got := r.Header.Get("Authorization"); got != want {
				t.Errorf("Authorization %q, want %q", got, want)
			}
		}
	}
	sse := func(write func(http.ResponseWriter, int)) func(*testing.T, http.ResponseWriter, int) {
		return func(_ *testing.T, w http.ResponseWriter, turn int) { write(w, turn) }
	}
	return []wireCase{
		{
			name: "anthropic", provider: "anthropic", path: "/v1/messages",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": url}
			},
			check: bearer("Bearer sk-ant-test"), answer: sse(writeAnthropicSSE),
		},
		{
			// A gateway as Claude Code reaches one: its token as a bearer
			// instead of a key, and headers of its own.
			name: "anthropic gateway", provider: "anthropic", path: "/v1/messages",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"ANTHROPIC_AUTH_TOKEN": "gw-token-test", "ANTHROPIC_BASE_URL": url,
					"ANTHROPIC_CUSTOM_HEADERS": "cf-aig-authorization: Bearer cf-test\nX-Team: dsh"}
			},
			check: func(t *testing.T, r *http.Request, body []byte) {
				bearer("Bearer gw-token-test")(t, r, body)
				if r.Header.Get("X-Api-Key") != "" || r.Header.Get("Cf-Aig-Authorization") != "Bearer cf-test" || r.Header.Get("X-Team") != "dsh" {
					t.Errorf("headers %v", r.Header)
				}
			},
			answer: sse(writeAnthropicSSE),
		},
		{
			// Claude Code's apiKeyHelper, which the runner runs: its output
			// in both of the headers Claude Code sends it in.
			name: "anthropic apiKeyHelper", provider: "anthropic", path: "/v1/messages",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{KeyHelperEnv: "printf 'helper-%s-test\\n' key", "ANTHROPIC_BASE_URL": url}
			},
			check: func(t *testing.T, r *http.Request, body []byte) {
				bearer("Bearer helper-key-test")(t, r, body)
				if r.Header.Get("X-Api-Key") != "helper-key-test" {
					t.Errorf("X-Api-Key %q", r.Header.Get("X-Api-Key"))
				}
			},
			answer: sse(writeAnthropicSSE),
		},
		{
			name: "bedrock", provider: "bedrock", path: "/model/global.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret-test",
					"ANTHROPIC_BEDROCK_BASE_URL": url, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull}
			},
			flags: Flags{Provider: "bedrock", Model: "claude-sonnet-5-5"},
			check: checkSigV4, answer: writeBedrockStream,
		},
		{
			// Claude Code's awsCredentialExport, which the runner runs:
			// the credentials it prints sign the request, the chain unused.
			name: "bedrock awsCredentialExport", provider: "bedrock", path: "/model/global.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDNOTTHIS", "AWS_SECRET_ACCESS_KEY": "not-this",
					CredentialExportEnv:          `echo '{"Credentials": {"AccessKeyId": "AKIDTEST", "SecretAccessKey": "secret-test", "SessionToken": "session-test", "Expiration": "2099-01-01T00:00:00Z"}}'`,
					"ANTHROPIC_BEDROCK_BASE_URL": url, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull}
			},
			flags: Flags{Provider: "bedrock", Model: "claude-sonnet-5-5"},
			check: func(t *testing.T, r *http.Request, body []byte) {
				checkSigV4(t, r, body)
				if got := r.Header.Get("X-Amz-Security-Token"); got != "session-test" {
					t.Errorf("X-Amz-Security-Token %q", got)
				}
			},
			answer: writeBedrockStream,
		},
		{
			// A Bedrock API key, which dsh keeps out of the environment
			// like every key: the SDK, which reads it there, is handed it.
			name: "bedrock api key", provider: "bedrock", path: "/model/global.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AWS_REGION": "eu-west-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-key-test",
					"ANTHROPIC_BEDROCK_BASE_URL": url, "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull}
			},
			flags: Flags{Provider: "bedrock", Model: "claude-sonnet-5-5"},
			check: bearer("Bearer bedrock-key-test"), answer: writeBedrockStream,
		},
		{
			// The AWS SDK's own settings, hidden from the environment like
			// every AWS_* variable: a profile in another config file.
			name: "bedrock config file", provider: "bedrock", path: "/model/global.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream",
			env: func(t *testing.T, url string) map[string]string {
				conf := filepath.Join(t.TempDir(), "config")
				if err := os.WriteFile(conf, []byte("[profile dsh]\nregion = eu-west-1\naws_access_key_id = AKIDTEST\naws_secret_access_key = secret-test\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"AWS_CONFIG_FILE": conf, "AWS_PROFILE": "dsh", "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
					"ANTHROPIC_BEDROCK_BASE_URL": url}
			},
			flags: Flags{Provider: "bedrock", Model: "claude-sonnet-5-5"},
			check: checkSigV4, answer: writeBedrockStream,
		},
		{
			// A container's role (ECS, EKS Pod Identity): credentials from
			// the endpoint the container is given, with its token.
			name: "bedrock container role", provider: "bedrock", path: "/model/global.anthropic.claude-sonnet-5-5-v1:0/invoke-with-response-stream",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AWS_REGION": "eu-west-1", "AWS_CONTAINER_CREDENTIALS_FULL_URI": url + "/container-credentials",
					"AWS_CONTAINER_AUTHORIZATION_TOKEN": "container-token-test", "AWS_CONFIG_FILE": os.DevNull,
					"AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "ANTHROPIC_BEDROCK_BASE_URL": url}
			},
			flags: Flags{Provider: "bedrock", Model: "claude-sonnet-5-5"},
			check: func(t *testing.T, r *http.Request, body []byte) {
				if r.Header.Get("X-Amz-Security-Token") != "session-test" {
					t.Errorf("X-Amz-Security-Token %q, want the container's session token", r.Header.Get("X-Amz-Security-Token"))
				}
				checkSigV4(t, r, body)
			},
			answer: writeBedrockStream,
		},
		{
			name: "vertex", provider: "vertex", path: "/v1/projects/proj-test/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5:streamRawPredict",
			env: func(t *testing.T, url string) map[string]string {
				return map[string]string{"CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-test",
					"GOOGLE_APPLICATION_CREDENTIALS": serviceAccount(t, url+"/token"), "ANTHROPIC_VERTEX_BASE_URL": url}
			},
			flags: Flags{Provider: "vertex", Model: "claude-sonnet-5-5"},
			check: func(t *testing.T, r *http.Request, body []byte) {
				bearer("Bearer ya29.test-token")(t, r, body)
				var b map[string]any
				_ = json.Unmarshal(body, &b)
				if _, ok := b["model"]; ok || b["anthropic_version"] == nil || r.Header.Get("Anthropic-Version") != "" {
					t.Errorf("Vertex wants the model in the path and the version in the body: %s", body)
				}
			},
			answer: sse(writeAnthropicSSE),
		},
		{
			name: "openai chat", provider: "openai", path: "/v1/chat/completions",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa-test", "OPENAI_BASE_URL": url + "/v1"}
			},
			flags: Flags{Model: "gpt-4.1"},
			check: bearer("Bearer sk-oa-test"), answer: sse(writeChatSSE),
		},
		{
			name: "openai responses", provider: "openai", path: "/v1/responses",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa-test", "OPENAI_BASE_URL": url + "/v1"}
			},
			flags: Flags{Model: "gpt-5.5", OpenAIAPI: "responses"},
			check: bearer("Bearer sk-oa-test"), answer: sse(writeResponsesSSE),
		},
		{
			name: "azure chat", provider: "azure", path: "/openai/deployments/my-gpt/chat/completions",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AZURE_OPENAI_ENDPOINT": url, "AZURE_OPENAI_API_KEY": "az-key-test", "OPENAI_API_VERSION": "2025-04-01-preview"}
			},
			flags: Flags{Provider: "azure", Model: "my-gpt"},
			check: azureKey, answer: sse(writeChatSSE),
		},
		{
			name: "azure responses", provider: "azure", path: "/openai/responses",
			env: func(_ *testing.T, url string) map[string]string {
				return map[string]string{"AZURE_OPENAI_ENDPOINT": url, "AZURE_OPENAI_API_KEY": "az-key-test", "OPENAI_API_VERSION": "2025-04-01-preview"}
			},
			flags: Flags{Provider: "azure", Model: "gpt-5.5"},
			check: azureKey, answer: sse(writeResponsesSSE),
		},
	}
}

func azureKey(t *testing.T, r *http.Request, _ []byte) {
	if got := r.Header.Get("Api-Key"); got != "az-key-test" {
		t.Errorf("Api-Key %q", got)
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("an Authorization header beside the key: %q", r.Header.Get("Authorization"))
	}
	if v := r.URL.Query().Get("api-version"); v != "2025-04-01-preview" {
		t.Errorf("api-version %q", v)
	}
}

// checkSigV4 signs the request received again with the test's credentials at
// the time it says it was signed, and wants the same signature.
func checkSigV4(t *testing.T, r *http.Request, body []byte) {
	t.Helper()
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-west-1/bedrock/aws4_request") {
		t.Fatalf("Authorization %q is not a SigV4 signature for bedrock in eu-west-1", auth)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date: %v", err)
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret-test"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", "eu-west-1", at); err != nil {
		t.Fatal(err)
	}
	if want := again.Header.Get("Authorization"); auth != want {
		t.Errorf("signature does not verify:\n got %s\nwant %s", auth, want)
	}
}

// serviceAccount writes a Google service account key file whose token
// endpoint is the test server's, and returns its path.
func serviceAccount(t *testing.T, tokenURI string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(key))})
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj-from-key", "private_key_id": "k1",
		"private_key": string(pemKey), "client_email": "dsh-test@proj-test.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// wireServer answers the model's requests with tc's protocol, after checking
// tc's credential, and the OAuth token endpoint with a token for a signed
// JWT assertion.
type wireServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
}

func newWireServer(t *testing.T, tc wireCase) *wireServer {
	s := &wireServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/container-credentials" {
			if r.Header.Get("Authorization") != "container-token-test" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"AccessKeyId":"AKIDTEST","SecretAccessKey":"secret-test","Token":"session-test","Expiration":%q}`,
				time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
			return
		}
		if r.URL.Path == "/token" {
			form, err := url.ParseQuery(string(body))
			if err != nil || form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || strings.Count(form.Get("assertion"), ".") != 2 {
				t.Errorf("token request %v: %s", err, body)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"ya29.test-token","token_type":"Bearer","expires_in":3600}`)
			return
		}
		s.mu.Lock()
		turn := len(s.bodies) % 2
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.EscapedPath())
		s.mu.Unlock()
		tc.check(t, r, body)
		tc.answer(t, w, turn)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestScriptedTaskThroughEveryProvider is the task through each provider: a
// tool call, its result, the answer; then the history sent again by a fresh
// provider, as after a reload.
func TestScriptedTaskThroughEveryProvider(t *testing.T) {
	for _, tc := range wireCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := newWireServer(t, tc)
			e := tc.env(t, s.URL)
			build := func() provider.Provider {
				p, err := FromEnv(env(e), tc.flags)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			p := build()
			if p.Name() != tc.provider {
				t.Fatalf("built %s, want %s", p.Name(), tc.provider)
			}
			req := provider.Request{System: "You are dsh.", MaxTokens: 4096,
				Tools:    []provider.ToolDef{{Name: "read", Description: "Read a file.", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
				Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "What is a.go?"}}}}}
			var shown strings.Builder
			r1, err := p.Stream(context.Background(), req, func(d provider.Delta) { shown.WriteString(string(d.Type) + ":" + d.Text + " ") })
			if err != nil {
				t.Fatal(err)
			}
			var call *provider.Part
			for i, part := range r1.Message.Parts {
				if part.Type == provider.PartToolUse {
					call = &r1.Message.Parts[i]
				}
			}
			if r1.StopReason != provider.StopToolUse || call == nil || call.ID != "call_1" || call.Name != "read" || string(call.Args) != `{"path":"a.go"}` {
				t.Fatalf("turn 1: %+v", r1)
			}
			req.Messages = append(req.Messages, logged(t, r1.Message), provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
				{Type: provider.PartToolResult, ID: call.ID, Content: []card.Content{card.Text("package a")}}}})
			r2, err := p.Stream(context.Background(), req, func(d provider.Delta) { shown.WriteString(string(d.Type) + ":" + d.Text + " ") })
			if err != nil {
				t.Fatal(err)
			}
			if r2.StopReason != provider.StopEndTurn || len(r2.Message.Parts) != 1 || r2.Message.Parts[0].Text != "a.go is package a." {
				t.Fatalf("turn 2: %+v", r2)
			}
			if s.paths[0] != strings.ReplaceAll(tc.path, ":", "%3A") && s.paths[0] != tc.path {
				t.Errorf("path %s, want %s", s.paths[0], tc.path)
			}

			// A reload: the same history, a provider built anew.
			if _, err := build().Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.bodies[1], s.bodies[2]) {
				t.Errorf("the reloaded request differs:\n%s\n%s", s.bodies[1], s.bodies[2])
			}
			t.Logf("%s: %s→ %q; requests %s", tc.name, shown.String(), r2.Message.Parts[0].Text, strings.Join(s.paths, " "))
		})
	}
}

// logged is a message as the session log gives it back: its parts through
// JSON, the log's encoding.
func logged(t *testing.T, m provider.Message) provider.Message {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out provider.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
