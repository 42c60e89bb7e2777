// Package netproxy is the network by domain of sandboxed commands and
// web_fetch: the rules that say which hosts may be reached, and the proxy,
// run by dsh outside the sandbox, through which alone confined commands reach
// the network (HTTP, HTTPS through CONNECT, and SOCKS5 for other TCP). The
// proxy resolves names itself, so a command's DNS never leaves the sandbox.
package netproxy

import (
	"fmt"
	"net/netip"
	"strings"
)

// Rules are the hosts that may be reached. An empty Rules allows every host
// (the network is not filtered).
type Rules struct {
	// Allow are the lists a host must be on, every one of them: the user's
	// network.allowed_domains, and a project's, which can only narrow it.
	Allow [][]string
	// Deny are hosts never reached, whatever Allow says.
	Deny []string
}

// Filtered reports whether the rules restrict anything.
func (r Rules) Filtered() bool { return len(r.Allow) > 0 || len(r.Deny) > 0 }

// Refused is a host the rules do not let be reached, and why.
type Refused struct {
	Host   string
	Reason string
}

func (e *Refused) Error() string {
	return "dsh's network rules refused " + e.Host + ": " + e.Reason
}

// Check returns nil when host (a name or an IP address, without a port) may
// be reached, else a *Refused that says why. A deny beats an allow; an IP
// address is reached only when an allow list names it, so that a denied
// name cannot be reached by its address.
func (r Rules) Check(host string) error {
	h := normalize(host)
	for _, d := range r.Deny {
		if match(d, h) {
			return &Refused{h, "it matches " + d + " in network.denied_domains"}
		}
	}
	_, isIP := ip(h)
	for _, list := range r.Allow {
		if !matchAny(list, h) {
			if isIP {
				return &Refused{h, "an IP address is reached only when network.allowed_domains lists it"}
			}
			return &Refused{h, "it is not in network.allowed_domains (" + strings.Join(list, ", ") + ")"}
		}
	}
	if isIP && len(r.Allow) == 0 {
		return &Refused{h, "an IP address is reached only when network.allowed_domains lists it"}
	}
	return nil
}

func matchAny(list []string, host string) bool {
	for _, p := range list {
		if match(p, host) {
			return true
		}
	}
	return false
}

// match reports whether pattern names host: the same name, or for
// "*.example.com" any name below example.com (not example.com itself);
// an address only the same address.
func match(pattern, host string) bool {
	pattern = normalize(pattern)
	if a, ok := ip(pattern); ok {
		b, ok := ip(host)
		return ok && a == b
	}
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return pattern == host
}

// normalize is a host as rules compare it: lower case, without the brackets
// of an IPv6 address or the final dot of a fully qualified name.
func normalize(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(host, ".")
}

func ip(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// Valid checks one entry of a domain list: a name ("example.com"), a
// wildcard over the names below one ("*.example.com") or an IP address.
func Valid(pattern string) error {
	p := normalize(pattern)
	if _, ok := ip(p); ok {
		return nil
	}
	name := strings.TrimPrefix(p, "*.")
	bad := name == "" || strings.Contains(name, "*") || strings.HasPrefix(name, ".") || strings.Contains(name, "..")
	for _, c := range name {
		bad = bad || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-._", c)
	}
	if bad {
		return fmt.Errorf("want a domain name, *.domain or an IP address, got %q", pattern)
	}
	return nil
}
