// Package proxyenv has dsh's own connections go through the proxy the user
// set. secretenv hides a proxy whose URL holds a password from the
// environment (commands must not read it), where net/http would look for it:
// without this, dsh and its model runner would connect directly, which a
// company's network refuses.
package proxyenv

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http/httpproxy"
)

// Names are the variables that name a proxy, as net/http reads them.
var Names = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"}

type chosen struct {
	key   string // the variables' values it was made from
	proxy func(*url.URL) (*url.URL, error)
}

var (
	current atomic.Pointer[chosen]
	install sync.Once
)

// Use has http.DefaultTransport, and the transports cloned from it after,
// find their proxy with getenv (secretenv.Getenv, which still has what it
// hid), as net/http would in the environment. A later call with other
// values replaces them, also for requests under way.
func Use(getenv func(string) string) {
	install.Do(func() { // first: a caller that returns early below may send a request at once
		http.DefaultTransport.(*http.Transport).Proxy = func(r *http.Request) (*url.URL, error) {
			if c := current.Load(); c != nil {
				return c.proxy(r.URL)
			}
			return nil, nil
		}
	})
	vals := make([]string, len(Names))
	for i, n := range Names {
		vals[i] = getenv(n)
	}
	key := strings.Join(vals, "\x00")
	if c := current.Load(); c != nil && c.key == key {
		return
	}
	first := func(i int) string { // the upper-case name, else the lower-case one
		if vals[i] != "" {
			return vals[i]
		}
		return vals[i+1]
	}
	cfg := httpproxy.Config{HTTPSProxy: first(0), HTTPProxy: first(2), NoProxy: first(4)}
	current.Store(&chosen{key: key, proxy: cfg.ProxyFunc()})
}

// Restore is Use, and puts the proxy variables getenv has back into this
// process's environment too: the model runner's SDKs that have transports
// of their own (AWS's) and the credential helpers they run read them there.
func Restore(getenv func(string) string) error {
	Use(getenv)
	for _, n := range Names {
		if v := getenv(n); v != "" {
			if err := os.Setenv(n, v); err != nil {
				return err
			}
		}
	}
	return nil
}
