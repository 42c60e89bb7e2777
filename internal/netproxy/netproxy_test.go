package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	xproxy "golang.org/x/net/proxy"
)

func TestCheck(t *testing.T) {
	allow := []string{"example.com", "*.github.com", "10.1.2.3", "::1"}
	tests := []struct {
		name  string
		rules Rules
		host  string
		want  string // "" allowed, else a part of the refusal
	}{
		{"exact", Rules{Allow: [][]string{allow}}, "example.com", ""},
		{"case and final dot", Rules{Allow: [][]string{allow}}, "EXAMPLE.com.", ""},
		{"not listed", Rules{Allow: [][]string{allow}}, "evil.example", "not in network.allowed_domains"},
		{"subdomain of an exact entry", Rules{Allow: [][]string{allow}}, "www.example.com", "not in network.allowed_domains"},
		{"suffix that is not a subdomain", Rules{Allow: [][]string{allow}}, "notexample.com", "not in network.allowed_domains"},
		{"wildcard", Rules{Allow: [][]string{allow}}, "api.github.com", ""},
		{"wildcard deeper", Rules{Allow: [][]string{allow}}, "a.b.github.com", ""},
		{"wildcard not the apex", Rules{Allow: [][]string{allow}}, "github.com", "not in network.allowed_domains"},
		{"wildcard suffix trick", Rules{Allow: [][]string{allow}}, "evilgithub.com", "not in network.allowed_domains"},
		{"listed address", Rules{Allow: [][]string{allow}}, "10.1.2.3", ""},
		{"listed v6 in brackets", Rules{Allow: [][]string{allow}}, "[::1]", ""},
		{"v4-mapped listed address", Rules{Allow: [][]string{allow}}, "::ffff:10.1.2.3", ""},
		{"unlisted address", Rules{Allow: [][]string{allow}}, "93.184.216.34", "IP address"},
		{"address with only a deny list", Rules{Deny: []string{"evil.example"}}, "93.184.216.34", "IP address"},
		{"deny beats allow", Rules{Allow: [][]string{allow}, Deny: []string{"*.github.com"}}, "api.github.com", "network.denied_domains"},
		{"deny only", Rules{Deny: []string{"evil.example"}}, "good.example", ""},
		{"deny only, denied", Rules{Deny: []string{"evil.example"}}, "evil.example", "network.denied_domains"},
		{"project narrows", Rules{Allow: [][]string{allow, {"api.github.com"}}}, "example.com", "not in network.allowed_domains (api.github.com)"},
		{"project narrows, both allow", Rules{Allow: [][]string{allow, {"api.github.com"}}}, "api.github.com", ""},
		{"project cannot widen", Rules{Allow: [][]string{allow, {"evil.example"}}}, "evil.example", "not in network.allowed_domains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rules.Check(tt.host)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check(%q) = %v, want allowed", tt.host, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check(%q) = %v, want a refusal saying %q", tt.host, err, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for _, p := range []string{"example.com", "*.example.com", "127.0.0.1", "::1", "xn--bcher-kva.example", "localhost"} {
		if err := Valid(p); err != nil {
			t.Errorf("Valid(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "*", "*.", "a.*.com", "exa mple.com", "http://example.com", "example.com:443", ".example.com", "a..b"} {
		if err := Valid(p); err == nil {
			t.Errorf("Valid(%q) = nil, want an error", p)
		}
	}
}

// serve starts the proxy of rules on a loopback listener, with the test
// names mapped to loopback.
func serve(t *testing.T, rules Rules, hosts string) (*Session, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := New(rules, func(name string) string {
		if name == TestHostsEnv {
			return hosts
		}
		return ""
	})
	s := p.Serve(l)
	t.Cleanup(func() { s.Close() })
	return s, l.Addr().String()
}

func origin(t *testing.T, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, body+" "+r.Host)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

func TestProxy(t *testing.T) {
	okPort, evilPort := origin(t, "ok"), origin(t, "evil")
	rules := Rules{Allow: [][]string{{"allowed.test", "*.allowed.test"}}, Deny: []string{"no.allowed.test"}}
	hosts := "allowed.test=127.0.0.1,www.allowed.test=127.0.0.1,no.allowed.test=127.0.0.1,evil.test=127.0.0.1,far.test=10.0.0.1"
	tests := []struct {
		name, via, url string
		want           string // the body, or "refused" / "failed"
	}{
		{"plain http", "http", "http://allowed.test:" + okPort + "/", "ok allowed.test:" + okPort},
		{"plain http, wildcard", "http", "http://www.allowed.test:" + okPort + "/", "ok www.allowed.test:" + okPort},
		{"plain http, not listed", "http", "http://evil.test:" + evilPort + "/", "refused"},
		{"plain http, denied", "http", "http://no.allowed.test:" + evilPort + "/", "refused"},
		{"plain http, by address", "http", "http://127.0.0.1:" + evilPort + "/", "refused"},
		{"connect", "connect", "http://allowed.test:" + okPort + "/", "ok allowed.test:" + okPort},
		{"connect, not listed", "connect", "http://evil.test:" + evilPort + "/", "refused"},
		{"socks", "socks", "http://allowed.test:" + okPort + "/", "ok allowed.test:" + okPort},
		{"socks, not listed", "socks", "http://evil.test:" + evilPort + "/", "refused"},
		{"socks, by address", "socks", "http://127.0.0.1:" + evilPort + "/", "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, addr := serve(t, rules, hosts)
			got := fetch(t, tt.via, addr, tt.url)
			if got != tt.want {
				t.Fatalf("GET %s via %s = %q, want %q", tt.url, tt.via, got, tt.want)
			}
			host := strings.Split(strings.TrimPrefix(tt.url, "http://"), ":")[0]
			if refused := s.Close(); (tt.want == "refused") != slices.Equal(refused, []string{host}) {
				t.Fatalf("refused hosts %q after GET %s", refused, tt.url)
			}
		})
	}
}

// fetch GETs url through the proxy at addr: as a plain proxy request, through
// a CONNECT tunnel, or through SOCKS5. It returns the body, "refused" when
// the proxy refused with its message, or "failed: …".
func fetch(t *testing.T, via, addr, target string) string {
	t.Helper()
	tr := &http.Transport{}
	switch via {
	case "http":
		tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: addr})
	case "connect":
		tr.DialContext = func(ctx context.Context, _, to string) (net.Conn, error) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", to, to)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				return nil, fmt.Errorf("%d %s", resp.StatusCode, b)
			}
			return c, nil
		}
	case "socks":
		d, err := xproxy.SOCKS5("tcp", addr, nil, xproxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		tr.DialContext = d.(xproxy.ContextDialer).DialContext
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(target)
	if err != nil {
		if strings.Contains(err.Error(), "dsh's network rules refused") || strings.Contains(err.Error(), "not allowed by ruleset") {
			return "refused"
		}
		return "failed: " + err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusForbidden && strings.Contains(string(b), "dsh's network rules refused") {
		return "refused"
	}
	return string(b)
}

// A name that resolves to this machine is refused, unless it is a test name:
// an allowed domain's DNS must not lead commands to local services.
func TestLocalAddressRefused(t *testing.T) {
	p := New(Rules{Allow: [][]string{{"localhost"}}}, func(string) string { return "" })
	_, err := p.Dial(t.Context(), "tcp", "localhost:80")
	if r, ok := errors.AsType[*Refused](err); !ok || !strings.Contains(r.Reason, "local address") {
		t.Fatalf("Dial(localhost) = %v, want refused as a local address", err)
	}
}

// The test map takes only loopback addresses: it cannot send a name anywhere else.
func TestTestHostsOnlyLoopback(t *testing.T) {
	p := New(Rules{}, func(string) string { return "a.test=127.0.0.2, b.test=10.0.0.1,c.test=::1" })
	if len(p.hosts) != 2 || !p.hosts["a.test"].IsLoopback() || !p.hosts["c.test"].IsLoopback() {
		t.Fatalf("hosts = %v, want only a.test and c.test", p.hosts)
	}
}

func TestTransport(t *testing.T) {
	okPort := origin(t, "ok")
	p := New(Rules{Allow: [][]string{{"allowed.test"}}}, func(string) string { return "allowed.test=127.0.0.1,evil.test=127.0.0.1" })
	c := &http.Client{Transport: p.Transport()}
	resp, err := c.Get("http://allowed.test:" + okPort + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	_, err = c.Get("http://evil.test:" + okPort + "/")
	if _, ok := errors.AsType[*Refused](err); !ok {
		t.Fatalf("GET evil.test = %v, want a refusal", err)
	}
}

// A plain request's Host header cannot name a host other than the one its
// URL names, which is the one checked.
func TestHostHeaderIsTheChecked(t *testing.T) {
	port := origin(t, "ok")
	_, addr := serve(t, Rules{Allow: [][]string{{"allowed.test"}}}, "allowed.test=127.0.0.1")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://allowed.test:%s/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", port)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if want := "ok allowed.test:" + port; string(b) != want {
		t.Fatalf("the server saw %q, want %q", b, want)
	}
}
