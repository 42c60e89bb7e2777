package anthropic

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/dsh-dev/dsh/internal/provider"
)

// keyScript is an apiKeyHelper that counts its runs in a file and prints
// key-N for its Nth run; runs reads the count.
func keyScript(t *testing.T) (command string, runs func() int) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	command = `n=$(cat '` + count + `' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '` + count + `'; echo "  key-$n"`
	return command, func() int {
		b, err := os.ReadFile(count)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

func helperProvider(t *testing.T, s *server, cfg Config) *Provider {
	t.Helper()
	cfg.BaseURL = s.URL
	cfg.Backoff = func(int, time.Duration) time.Duration { return 0 }
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ask(p *Provider) error {
	_, err := p.Stream(context.Background(), provider.Request{Messages: []provider.Message{userText("hi")}}, nil)
	return err
}

// The helper's output is the credential, in both of the headers Claude Code
// sends it in; it is run again only once its time is up.
func TestKeyHelperKeyIsSentAndKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		want []string // the key of each of three requests
	}{
		{"within its time", 0, []string{"key-1", "key-1", "key-1"}},
		{"past its time", time.Nanosecond, []string{"key-1", "key-2", "key-3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			command, runs := keyScript(t)
			s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
			p := helperProvider(t, s, Config{KeyHelper: command, KeyHelperTTL: tc.ttl})
			for i, want := range tc.want {
				if err := ask(p); err != nil {
					t.Fatal(err)
				}
				h := s.heads[i]
				if h.Get("X-Api-Key") != want || h.Get("Authorization") != "Bearer "+want {
					t.Errorf("request %d: X-Api-Key %q, Authorization %q; want %s", i, h.Get("X-Api-Key"), h.Get("Authorization"), want)
				}
			}
			if got := runs(); got != len(slices.Compact(slices.Clone(tc.want))) {
				t.Errorf("the helper ran %d times", got)
			}
		})
	}
}

// A key refused with 401 is replaced by the helper's next, and the request
// sent once more; a key refused again is the user's error, not retried.
func TestKeyHelperRunAgainAfter401(t *testing.T) {
	command, runs := keyScript(t)
	s := newServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 || n == 2 || n == 3 {
			jsonError(w, 401, "authentication_error", "expired", nil)
			return
		}
		writeSSE(w, simpleText("ok")...)
	})
	p := helperProvider(t, s, Config{KeyHelper: command})
	if err := ask(p); err != nil {
		t.Fatalf("a rotated key: %v", err)
	}
	if s.requests() != 2 || s.heads[1].Get("X-Api-Key") != "key-2" || runs() != 2 {
		t.Fatalf("%d requests, the second with %q, %d runs; want 2, key-2, 2", s.requests(), s.heads[1].Get("X-Api-Key"), runs())
	}
	err := ask(p) // key-2 is refused, then key-3
	if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "apiKeyHelper") {
		t.Fatalf("refused twice: %v", err)
	}
	if s.requests() != 4 || runs() != 3 {
		t.Errorf("%d requests, %d runs; want 4 and 3", s.requests(), runs())
	}
}

// A helper that fails says so, in the user's words with its own last line,
// and is not run again and again; no request goes out without a key.
func TestKeyHelperFailure(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, command, want string
	}{
		{"fails", `echo "vault: permission denied" >&2; echo 1 >> '` + filepath.Join(dir, "runs") + `'; exit 3`, "failed: exit status 3: vault: permission denied"},
		{"prints nothing", `true`, "printed no key"},
		{"prints two lines", `printf 'a\nb\n'`, "printed no key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
			p := helperProvider(t, s, Config{KeyHelper: tc.command})
			err := ask(p)
			if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "Claude Code's apiKeyHelper ("+tc.command+") "+tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if s.requests() != 0 {
				t.Errorf("%d requests went out without a key", s.requests())
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(b), "1") != 1 {
		t.Errorf("the failing helper ran %d times, want once", strings.Count(string(b), "1"))
	}
}

// As in Claude Code, a key or a token in the environment comes before the
// helper, which is then not run.
func TestKeyHelperAfterKeyAndToken(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		key, bearer string
	}{
		{"a key", Config{APIKey: "sk-env"}, "", "Bearer sk-env"}, // as the SDK sends a key
		{"a token", Config{AuthToken: "gw"}, "", "Bearer gw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			command, runs := keyScript(t)
			s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
			tc.cfg.KeyHelper = command
			if err := ask(helperProvider(t, s, tc.cfg)); err != nil {
				t.Fatal(err)
			}
			if h := s.heads[0]; h.Get("X-Api-Key") != tc.key || h.Get("Authorization") != tc.bearer || runs() != 0 {
				t.Errorf("X-Api-Key %q, Authorization %q, %d runs", h.Get("X-Api-Key"), h.Get("Authorization"), runs())
			}
		})
	}
}

// awsCredentialExport's JSON becomes the credentials, until its Expiration
// or, without one, for a while; what is not that JSON, or a failure, is the
// user's to mend and says how.
func TestCredentialExport(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, print string
		want        aws.Credentials
		err         string
	}{
		{"with an expiration", `{"Credentials": {"AccessKeyId": "AKID", "SecretAccessKey": "s", "SessionToken": "t", "Expiration": "2026-12-05T13:00:00Z"}}`,
			aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s", SessionToken: "t", Source: "awsCredentialExport", CanExpire: true, Expires: now.Add(time.Hour)}, ""},
		{"without", `{"Credentials": {"AccessKeyId": "AKID", "SecretAccessKey": "s"}}`,
			aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s", Source: "awsCredentialExport", CanExpire: true, Expires: now.Add(exportedFor)}, ""},
		{"aws configure export-credentials", `{"Version": 1, "AccessKeyId": "AKID", "SecretAccessKey": "s", "SessionToken": "t", "Expiration": "2026-12-05T12:30:00+00:00"}`,
			aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s", SessionToken: "t", Source: "awsCredentialExport", CanExpire: true, Expires: now.Add(30 * time.Minute)}, ""},
		{"environment lines", `AWS_ACCESS_KEY_ID=AKID`, aws.Credentials{}, `printed no credentials: it should print {"Credentials"`},
		{"no secret", `{"Credentials": {"AccessKeyId": "AKID"}}`, aws.Credentials{}, "printed no credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exported("printf '%s' '"+tc.print+"'", func() time.Time { return now }).Retrieve(context.Background())
			if tc.err != "" {
				if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "Claude Code's awsCredentialExport") || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if got.Expires.Equal(tc.want.Expires) { // one instant, whatever its zone
				got.Expires = tc.want.Expires
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
	if _, err := exported("echo 'aws: token expired' >&2; exit 255", time.Now).Retrieve(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "awsCredentialExport (echo 'aws: token expired' >&2; exit 255) failed: exit status 255: aws: token expired") {
		t.Errorf("a failing command: %v", err)
	}
}

// A failing awsCredentialExport fails the prompt with its message, once: the
// signer's wrapping keeps it the user's error, not a transient one.
func TestCredentialExportFailureThroughBedrock(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	command := "echo 1 >> '" + runs + "'; echo 'not signed in' >&2; exit 1"
	s := newServer(t, func(_ int, w http.ResponseWriter) { writeSSE(w, simpleText("ok")...) })
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	pl, err := Bedrock(context.Background(), BedrockConfig{Region: "eu-west-1", CredentialExport: command})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Platform: pl, BaseURL: s.URL, Backoff: func(int, time.Duration) time.Duration { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	err = ask(p)
	if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "awsCredentialExport") || !strings.Contains(err.Error(), "not signed in") {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(runs); strings.Count(string(b), "1") != 1 || s.requests() != 0 {
		t.Errorf("ran %d times, %d requests", strings.Count(string(b), "1"), s.requests())
	}
}

// A request cancelled while its helper runs ends as cancelled, not as a
// helper to mend.
func TestKeyHelperCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := runHelper(ctx, "apiKeyHelper", "echo k"); !errors.Is(err, context.Canceled) || errors.Is(err, provider.ErrAuth) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// A helper that fails when asked again after a 401 is what the user reads:
// it says what to mend, where the 401 would only say the key was refused.
func TestKeyHelperFailsAfter401(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	command := `n=$(cat '` + count + `' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '` + count + `'; [ $n -gt 1 ] && { echo 'vault sealed' >&2; exit 2; }; echo key-$n`
	s := newServer(t, func(_ int, w http.ResponseWriter) { jsonError(w, 401, "authentication_error", "expired", nil) })
	err := ask(helperProvider(t, s, Config{KeyHelper: command}))
	if !errors.Is(err, provider.ErrAuth) || !strings.Contains(err.Error(), "failed: exit status 2: vault sealed") || s.requests() != 1 {
		t.Errorf("err %v after %d requests", err, s.requests())
	}
}
