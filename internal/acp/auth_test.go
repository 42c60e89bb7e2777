package acp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// anthropicStream is one streamed answer, "signed in".
const anthropicStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"signed in\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// keyServer is an Anthropic API on loopback that answers every message and
// remembers the keys it was sent.
func keyServer(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/messages" { // the model list
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		keys = append(keys, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, anthropicStream)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), keys...) }
}

// noKeys clears every provider key the machine may have, so the test's are
// the only ones.
var noKeys = []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "DSH_PROVIDER="}

// TestSignIn walks the editor's sign-in: dsh without a key offers agent
// methods that explain what to do (ACP 1.7.0 has no env_var type any more), a prompt is auth_required (the code
// editors answer with their sign-in), authenticate without the key says what
// is missing; started again with the key (as the editor does) it
// authenticates, keeps the key in the credentials file because the user's
// configuration says so — never in the log — and a dsh started later without
// the key signs in from that file.
func TestSignIn(t *testing.T) {
	srv, keys := keyServer(t)
	configHome, sessions := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(configHome, "dsh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configHome, "dsh", "config.toml"), []byte("api_key_store = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(noKeys[:len(noKeys):len(noKeys)], "ANTHROPIC_BASE_URL="+srv.URL)
	open := func(extra ...string) *client {
		return start(t, options{noScript: true, configHome: configHome, sessionDir: sessions, mode: "bypass",
			env: append(env[:len(env):len(env)], extra...)})
	}

	c := open()
	var ids []string
	for _, m := range c.init.AuthMethods {
		switch {
		case m.EnvVar != nil, m.Terminal != nil:
			t.Errorf("a method of a type the client did not ask for: %+v", m)
		case m.Agent != nil:
			ids = append(ids, m.Agent.Id)
			if d := m.Agent.Description; d == nil || !strings.Contains(*d, "dsh login") && !strings.Contains(*d, "_API_KEY") {
				t.Errorf("the agent method does not explain what to do: %v", d)
			}
		}
	}
	if got, want := strings.Join(ids, ", "), "anthropic-api-key, openai-api-key, dsh-login"; got != want {
		t.Errorf("authMethods = %s, want %s", got, want)
	}
	id := c.newSession()
	_, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}})
	wantAuthRequired(t, "a prompt without a key", err, "ANTHROPIC_API_KEY")
	_, err = c.conn.Authenticate(c.ctx(), sdk.AuthenticateRequest{MethodId: "anthropic-api-key"})
	wantAuthRequired(t, "authenticate without the key", err, "ANTHROPIC_API_KEY is not set")
	_, err = c.conn.Authenticate(c.ctx(), sdk.AuthenticateRequest{MethodId: "dsh-login"})
	wantAuthRequired(t, "the agent method without a key", err, "dsh login")
	c.close()

	const key = "sk-ant-test-secret-1234"
	c = open("ANTHROPIC_API_KEY=" + key)
	if _, err := c.conn.Authenticate(c.ctx(), sdk.AuthenticateRequest{MethodId: "anthropic-api-key"}); err != nil {
		t.Fatalf("authenticate with the key: %v", err)
	}
	cred := filepath.Join(configHome, "dsh", "credentials")
	if fi, err := os.Stat(cred); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	id = c.newSession()
	resp, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt after signing in: %v %v", resp, err)
	}
	// logout: the kept key is forgotten and prompts want a sign-in again,
	// though the environment still has the key.
	if c.init.AgentCapabilities.Auth.Logout == nil {
		t.Error("initialize: the logout capability is not advertised")
	}
	if _, err := c.conn.Logout(c.ctx(), sdk.LogoutRequest{}); err != nil {
		t.Fatalf("logout: %v", err)
	}
	if _, err := os.Stat(cred); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the credentials file after logout: %v", err)
	}
	_, err = c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock("still?")}})
	wantAuthRequired(t, "a prompt after logout", err, "Signed out")
	t.Logf("logout: the credentials file is gone; the next prompt: %v", err)
	if _, err := c.conn.Authenticate(c.ctx(), sdk.AuthenticateRequest{MethodId: "anthropic-api-key"}); err != nil {
		t.Fatalf("authenticate after logout: %v", err)
	}
	c.close()

	c = open() // the key is gone from the environment; the file has it
	resp, err = c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: c.newSession(), Prompt: []sdk.ContentBlock{sdk.TextBlock("again")}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt with the stored key: %v %v", resp, err)
	}
	c.close()

	if got := strings.Join(keys(), " "); got != key+" "+key {
		t.Errorf("the API saw keys %q, want the key twice", got)
	}
	logs, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl"))
	if len(logs) != 3 {
		t.Errorf("%d session logs, want 3", len(logs))
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key", l)
		}
	}
}

func wantAuthRequired(t *testing.T, what string, err error, msg string) {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 {
		t.Fatalf("%s: %v, want auth_required (-32000)", what, err)
	}
	if !strings.Contains(re.Message, msg) {
		t.Errorf("%s: %q does not say %q", what, re.Message, msg)
	}
}

// TestSignInWithAcpx has npm's acpx sign in the way its users configure it:
// ACPX_AUTH_<METHOD> in its environment, which it passes to the agent as the
// method's variable before calling authenticate.
func TestSignInWithAcpx(t *testing.T) {
	acpx := npmBin(t, "acpx")
	srv, keys := keyServer(t)
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, home := t.TempDir(), t.TempDir()
	agentCmd := strings.Join([]string{dshBin, "acp", "--session-dir", dir, "--mode", "bypass"}, " ")
	const key = "sk-ant-acpx-secret-5678"
	cmd := exec.Command(acpx, "--agent", agentCmd, "--cwd", cwd, "--format", "json", "--ttl", "1", "--approve-all", "exec", "hello")
	// acpx passes a key only to an agent whose environment lacks the variable.
	var base []string
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(noKeys, func(k string) bool { return strings.HasPrefix(kv, k) }) {
			base = append(base, kv)
		}
	}
	cmd.Env = append(base, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL="+srv.URL, "ACPX_AUTH_ANTHROPIC_API_KEY="+key)
	cmd.Dir = cwd
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("acpx exec: %v\n%s", err, out)
	}
	t.Cleanup(func() { waitGone(t, dir, home) })
	for _, want := range []string{`"method":"authenticate"`, `"methodId":"anthropic-api-key"`, "signed in", `"stopReason":"end_turn"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("acpx output lacks %s:\n%s", want, out)
		}
	}
	if got := keys(); len(got) != 1 || got[0] != key {
		t.Errorf("the API saw keys %q", got)
	}
	if strings.Contains(string(out), key) {
		t.Errorf("the key is in acpx's transcript")
	}
}
