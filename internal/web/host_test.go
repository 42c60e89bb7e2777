package web

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// dsh web answers only at its listen address: a DNS-rebinding page reaches it
// under another Host and is refused, token or not.
func TestServeRefusesForeignHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var reached atomic.Int32
	go func() {
		done <- Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			reached.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for host, want := range map[string]int{
		ln.Addr().String():                    http.StatusNoContent,
		"localhost:" + port:                   http.StatusNoContent,
		"LOCALHOST:" + port:                   http.StatusNoContent,
		"evil.example:" + port:                http.StatusMisdirectedRequest,
		"evil.example":                        http.StatusMisdirectedRequest,
		"127.0.0.1":                           http.StatusMisdirectedRequest,
		"127.0.0.1:1":                         http.StatusMisdirectedRequest,
		"127.0.0.1." + ":" + port:             http.StatusMisdirectedRequest,
		"127.0.0.1:" + port + ".evil.example": http.StatusMisdirectedRequest,
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
	if n := reached.Load(); n != 3 {
		t.Errorf("the handler ran %d times, want 3", n)
	}
}
