package providers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestChoice(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"turns":[{"text":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"turns":[{"txt":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     map[string]string
		flags   Flags
		want    string // provider name, or "" when an error is expected
		wantErr string // substring of the error
	}{
		{"anthropic key", map[string]string{"ANTHROPIC_API_KEY": "a"}, Flags{}, "anthropic", ""},
		{"anthropic wins over openai", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, Flags{}, "anthropic", ""},
		{"openai key", map[string]string{"OPENAI_API_KEY": "o"}, Flags{}, "openai", ""},
		{"local server", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, Flags{}, "openai", ""},
		{"explicit openai", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, Flags{Provider: "openai"}, "openai", ""},
		{"explicit openai without key", map[string]string{"ANTHROPIC_API_KEY": "a"}, Flags{Provider: "openai"}, "", "set OPENAI_API_KEY"},
		{"explicit anthropic without key", nil, Flags{Provider: "anthropic"}, "", "set ANTHROPIC_API_KEY"},
		{"script", nil, Flags{Provider: "script", Script: good}, "script", ""},
		{"script file alone", map[string]string{"ANTHROPIC_API_KEY": "a"}, Flags{Script: good}, "script", ""},
		{"script without file", nil, Flags{Provider: "script"}, "", "--provider script needs --script FILE"},
		{"script missing", nil, Flags{Script: filepath.Join(dir, "nope.json")}, "", "no such file"},
		{"script invalid", nil, Flags{Script: bad}, "", bad + `: script: line 1, column 12: unknown field "txt"`},
		{"unknown", nil, Flags{Provider: "gemini"}, "", `unknown provider "gemini"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FromEnv(env(tt.env), tt.flags)
			if tt.wantErr != "" {
				if p != nil || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("provider %v err %v, want an error containing %q", p, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.want {
				t.Errorf("provider %q, want %q", p.Name(), tt.want)
			}
		})
	}
}

func TestNoProvider(t *testing.T) {
	p, err := FromEnv(env(nil), Flags{})
	if p != nil || !errors.Is(err, ErrNoProvider) {
		t.Fatalf("provider %v err %v", p, err)
	}
	for _, s := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "--provider script", "dsh demo"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the message does not mention %s:\n%s", s, err)
		}
	}
}

func TestMissingKeyIsAnAuthError(t *testing.T) {
	_, err := FromEnv(env(nil), Flags{Provider: "anthropic"})
	if !errors.Is(err, provider.ErrAuth) {
		t.Errorf("%v does not wrap provider.ErrAuth", err)
	}
}

// TestSettingsReachTheServer checks that the base URL, key and --model taken
// from the environment and flags are what the request actually carries.
func TestSettingsReachTheServer(t *testing.T) {
	tests := []struct {
		provider string
		api      string // Flags.OpenAIAPI
		path     string
		stream   string
		env      func(url string) map[string]string
	}{
		{"anthropic", "", "/v1/messages",
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"pong\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			func(url string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": url}
			}},
		{"openai", "", "/v1/chat/completions",
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"pong\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: [DONE]\n\n",
			func(url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa-test", "OPENAI_BASE_URL": url + "/v1"}
			}},
		{"openai", "responses", "/v1/responses",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\"pong\"}\n\n" +
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"id\":\"m\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"pong\"}]}],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
			func(url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-oa-test", "OPENAI_BASE_URL": url + "/v1"}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.provider+tt.api, func(t *testing.T) {
			var model, auth, path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, _ := io.ReadAll(r.Body)
				var body struct{ Model string }
				_ = json.Unmarshal(raw, &body)
				model, auth, path = body.Model, r.Header.Get("Authorization"), r.URL.Path
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tt.stream)
			}))
			defer srv.Close()
			e := tt.env(srv.URL)
			p, err := FromEnv(env(e), Flags{Model: "my-model", OpenAIAPI: tt.api})
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.provider {
				t.Fatalf("chose %s", p.Name())
			}
			resp, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{
				{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "ping"}}},
			}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Parts[0].Text != "pong" {
				t.Errorf("response %+v", resp)
			}
			key := e["ANTHROPIC_API_KEY"] + e["OPENAI_API_KEY"]
			if model != "my-model" || auth != "Bearer "+key || path != tt.path {
				t.Errorf("model %q auth %q path %q", model, auth, path)
			}
		})
	}
}

// Each provider built from a script plays it from its first turn, also when
// the parsed file is shared; a file changed since is read again.
func TestScriptEachFromTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(`{"turns":[{"text":"`+text+`"}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	first := func() string {
		t.Helper()
		p, err := FromEnv(env(nil), Flags{Script: path})
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Stream(context.Background(), provider.Request{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Message.Parts[0].Text
	}
	write("one")
	if a, b := first(), first(); a != "one" || b != "one" {
		t.Errorf("two providers' first turns: %q, %q; want one, one", a, b)
	}
	write("three") // of another size: a coarse clock may give it the same mtime
	if got := first(); got != "three" {
		t.Errorf("after the file changed: %q, want three", got)
	}
}

// Entra ID's variables reach the runner (vendors.entraCredential): AZURE_*
// are secrets, out of the environment the runner inherits.
func TestAzureSpecCarriesEntraID(t *testing.T) {
	names := []string{"AZURE_OPENAI_ENDPOINT", "AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
		"AZURE_CLIENT_CERTIFICATE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST"}
	i := slices.IndexFunc(backends, func(b backend) bool { return b.name == "azure" })
	spec := backends[i].spec(func(k string) string { return "v-" + k }, Flags{})
	for _, k := range names {
		if spec.Env[k] != "v-"+k {
			t.Errorf("%s does not reach the runner", k)
		}
	}
}

// Claude Code's own settings choose and name Claude as they do there: its
// switch to Bedrock or Vertex wins over an Anthropic key, and ANTHROPIC_MODEL
// is the model when none is configured, in the cloud's form.
func TestClaudeCodeSettings(t *testing.T) {
	for _, tc := range []struct {
		name             string
		env              map[string]string
		provider, chosen string
		model, why       string
	}{
		{"bedrock switch over a key", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_API_KEY": "a"},
			"bedrock", "CLAUDE_CODE_USE_BEDROCK", models.BedrockModel(models.DefaultAnthropic), "default (Anthropic's, as a Bedrock global inference profile)"},
		{"bedrock switch and model", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "true", "ANTHROPIC_MODEL": "us.anthropic.claude-opus-4-1-20250805-v1:0"},
			"bedrock", "CLAUDE_CODE_USE_BEDROCK", "us.anthropic.claude-opus-4-1-20250805-v1:0", "environment ANTHROPIC_MODEL"},
		{"bedrock model as an alias", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_MODEL": "claude-opus-5"},
			"bedrock", "CLAUDE_CODE_USE_BEDROCK", "global.anthropic.claude-opus-5-v1:0", "environment ANTHROPIC_MODEL"},
		{"bedrock and an alias of Claude Code's", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_MODEL": "opus"},
			"bedrock", "CLAUDE_CODE_USE_BEDROCK", models.BedrockModel(models.ClaudeAlias("opus")), "environment ANTHROPIC_MODEL"},
		{"vertex switch", map[string]string{"CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_MODEL": "claude-opus-5"},
			"vertex", "CLAUDE_CODE_USE_VERTEX", "claude-opus-5", "environment ANTHROPIC_MODEL"},
		{"a switch that is off", map[string]string{"CLAUDE_CODE_USE_BEDROCK": "0", "ANTHROPIC_API_KEY": "a"},
			"anthropic", "ANTHROPIC_API_KEY", models.DefaultAnthropic, "default (Anthropic's)"},
		{"anthropic model", map[string]string{"ANTHROPIC_API_KEY": "a", "ANTHROPIC_MODEL": "claude-opus-5"},
			"anthropic", "ANTHROPIC_API_KEY", "claude-opus-5", "environment ANTHROPIC_MODEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, by := Chosen(env(tc.env))
			if name != tc.provider || by != tc.chosen {
				t.Errorf("chosen %s by %s, want %s by %s", name, by, tc.provider, tc.chosen)
			}
			model, why, err := DefaultModel(context.Background(), name, env(tc.env))
			if err != nil || model != tc.model || why != tc.why {
				t.Errorf("model %q (%s, %v), want %q (%s)", model, why, err, tc.model, tc.why)
			}
		})
	}
}

// The model runner reaches the vendor through the user's proxy, one with a
// password too, which dsh hides from the environment the runner inherits.
func TestRunnerGoesThroughTheProxy(t *testing.T) {
	seen := make(chan string, 16)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			seen <- r.Host + " " + r.Header.Get("Proxy-Authorization")
		}
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer proxy.Close()
	e := map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "https://api.dsh.example.test",
		"HTTPS_PROXY": "http://dsh:pw@" + strings.TrimPrefix(proxy.URL, "http://")}
	p, err := FromEnv(env(e), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "hi"}}}}}, nil)
		done <- err
	}()
	select {
	case got := <-seen:
		if want := "api.dsh.example.test:443 Basic ZHNoOnB3"; got != want {
			t.Errorf("the proxy was asked %q, want %q", got, want)
		}
	case err := <-done:
		t.Fatalf("the request did not go through the proxy: %v", err)
	}
	cancel() // the refusal is retried: no need to wait for that
	<-done
}
