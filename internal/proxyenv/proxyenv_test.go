package proxyenv

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// connectProxy is a proxy that refuses every tunnel, telling seen of each:
// the host asked for and the proxy credentials given.
func connectProxy(t *testing.T) (*httptest.Server, <-chan string) {
	seen := make(chan string, 16)
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			seen <- r.Host + " " + r.Header.Get("Proxy-Authorization")
		}
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(p.Close)
	return p, seen
}

// A proxy whose URL holds a password is hidden from the environment; dsh's
// own requests still go through it, with its credentials.
func TestUse(t *testing.T) {
	p, seen := connectProxy(t)
	t.Cleanup(func() { Use(func(string) string { return "" }) })
	t.Setenv("HTTPS_PROXY", "") // hidden, as secretenv leaves it
	t.Setenv("https_proxy", "")
	hidden := map[string]string{"https_proxy": "http://dsh:pw@" + strings.TrimPrefix(p.URL, "http://")}
	Use(func(k string) string { return hidden[k] })
	resp, err := http.Get("https://api.dsh.example.test/v1/messages")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("the request went through a proxy that refuses every tunnel")
	}
	select {
	case got := <-seen:
		if want := "api.dsh.example.test:443 Basic ZHNoOnB3"; got != want {
			t.Errorf("the proxy was asked %q, want %q", got, want)
		}
	default:
		t.Fatalf("the request did not go through the proxy: %v", err)
	}
}

// A later call with other values holds from then on: the model runner is
// told them with each call.
func TestUseAgain(t *testing.T) {
	a, seenA := connectProxy(t)
	b, seenB := connectProxy(t)
	t.Cleanup(func() { Use(func(string) string { return "" }) })
	for _, p := range []struct {
		url  string
		seen <-chan string
	}{{a.URL, seenA}, {b.URL, seenB}} {
		Use(func(k string) string {
			if k == "HTTPS_PROXY" {
				return p.url
			}
			return ""
		})
		if resp, err := http.Get("https://api.dsh.example.test/"); err == nil {
			_ = resp.Body.Close()
		}
		select {
		case <-p.seen:
		default:
			t.Fatalf("the request did not go through %s", p.url)
		}
	}
}
