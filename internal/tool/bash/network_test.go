package bash

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/sandbox"
)

// TestSandboxNetworkByDomain: with domain rules, a foreground command and a
// background job reach an allowed name through the proxy, a refused name is on
// the card's meta and in the note to the model, and a direct connection past
// the proxy variables reaches nothing; without rules, the same direct
// connection gets through (the control).
func TestSandboxNetworkByDomain(t *testing.T) {
	needSandbox(t, sandbox.On)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	sandboxDirs(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "reached\n")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	proxy := netproxy.New(netproxy.Rules{Allow: [][]string{{"allowed.test"}}}, func(name string) string {
		if name == netproxy.TestHostsEnv {
			return "allowed.test=127.0.0.1,evil.test=127.0.0.1"
		}
		return ""
	})
	direct := "curl -sS -m 10 --noproxy '*' http://127.0.0.1:" + port + "/"

	f := newFixture(t, Options{Sandbox: sandbox.On, Network: proxy})
	r := f.bash("curl -sS -m 10 http://allowed.test:" + port + "/")
	if out := r.TextOf(); r.IsError || !strings.Contains(out, "reached") {
		t.Fatalf("allowed name: %s", out)
	}
	if m := metaOf(t, r); m.SandboxRefused != "" {
		t.Fatalf("allowed name refused: %+v", m)
	}
	r = f.bash("curl -sS -m 10 -f http://evil.test:" + port + "/")
	m := metaOf(t, r)
	if !strings.Contains(m.SandboxRefused, "network: evil.test not allowed") || !strings.Contains(r.TextOf(), "The sandbox refused connections to evil.test.") {
		t.Fatalf("refused name: meta %+v, text %s", m, r.TextOf())
	}
	if r := f.bash(direct); strings.Contains(r.TextOf(), "reached") || !strings.Contains(r.TextOf(), "Exit code 7.") {
		t.Fatalf("a direct connection got through: %s", r.TextOf())
	}
	id := f.startJob("curl -sS -m 10 http://allowed.test:" + port + "/; curl -sS -m 10 http://evil.test:" + port + "/")
	if out := f.jobOutput(id, 10_000); !strings.Contains(out, "reached") || !strings.Contains(out, "the sandbox refused its connections to evil.test") {
		t.Fatalf("a background job: %s", out)
	}

	control := newFixture(t, Options{Sandbox: sandbox.On})
	if out := control.bash(direct).TextOf(); !strings.Contains(out, "reached") {
		t.Fatalf("the control did not reach the server: %s", out)
	}
}
