package fetch

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/netproxy"
)

// web_fetch obeys the network rules sandboxed commands do: a host they refuse
// is refused before anyone is asked, by name or address, and an allowed name
// is resolved as the proxy resolves it.
func TestNetworkRules(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "hello from "+r.Host)
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	proxy := netproxy.New(netproxy.Rules{Allow: [][]string{{"allowed.test", "*.allowed.test"}}, Deny: []string{"no.allowed.test"}},
		func(name string) string {
			if name == netproxy.TestHostsEnv {
				return "allowed.test=127.0.0.1,no.allowed.test=127.0.0.1,evil.test=127.0.0.1"
			}
			return ""
		})
	tl := New(Options{Network: proxy})
	tests := []struct{ url, want string }{
		{"http://allowed.test:" + port + "/", "hello from allowed.test:" + port},
		{"http://evil.test:" + port + "/", "dsh's network rules refused evil.test: it is not in network.allowed_domains"},
		{"http://no.allowed.test:" + port + "/", "dsh's network rules refused no.allowed.test: it matches no.allowed.test in network.denied_domains"},
		{"http://127.0.0.1:" + port + "/", "dsh's network rules refused 127.0.0.1: an IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			r := run(t, tl, Params{URL: tt.url})
			if got := r.TextOf(); !strings.Contains(got, tt.want) {
				t.Fatalf("web_fetch %s = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}
