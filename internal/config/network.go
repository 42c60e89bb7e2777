package config

import (
	"slices"
	"strings"

	"github.com/dsh-dev/dsh/internal/netproxy"
)

// Network is the [network] table: the domains sandboxed commands (through
// dsh's proxy) and web_fetch may reach. A project's file can only narrow it,
// trusted or not: its allowed_domains is one more list a host must be on, its
// denied_domains are added to the user's.
type Network struct {
	// Allow are the allowed_domains lists, each with its file; a host must
	// be on every one.
	Allow []DomainList
	// Deny are every file's denied_domains.
	Deny []string
}

// DomainList is one file's allowed_domains.
type DomainList struct {
	Domains []string
	Source  string
}

// Rules are the network rules the proxy enforces.
func (n Network) Rules() netproxy.Rules {
	r := netproxy.Rules{Deny: n.Deny}
	for _, l := range n.Allow {
		r.Allow = append(r.Allow, l.Domains)
	}
	return r
}

type rawNetwork struct {
	AllowedDomains []string `toml:"allowed_domains"`
	DeniedDomains  []string `toml:"denied_domains"`
}

// networkTable validates the [network] table.
func networkTable(r *rawNetwork, bad func(key, format string, args ...any) error) (*rawNetwork, error) {
	if r == nil {
		return nil, nil
	}
	for key, list := range map[string][]string{"network.allowed_domains": r.AllowedDomains, "network.denied_domains": r.DeniedDomains} {
		for i, d := range list {
			if err := netproxy.Valid(d); err != nil {
				return nil, bad(key, "%s[%d]: %v", key, i, err)
			}
		}
	}
	return r, nil
}

// mergeNetwork lays one file's [network] over the ones before it: every file
// narrows, the user's as a project's.
func (c *Config) mergeNetwork(r *rawNetwork, path string) {
	if r == nil {
		return
	}
	if r.AllowedDomains != nil {
		c.Network.Allow = append(c.Network.Allow, DomainList{Domains: r.AllowedDomains, Source: path})
	}
	if len(r.DeniedDomains) > 0 {
		c.Network.Deny = slices.Compact(slices.Sorted(slices.Values(append(c.Network.Deny, r.DeniedDomains...))))
		c.sources["network.denied_domains"] = joinSource(c.sources["network.denied_domains"], path)
	}
}

// networkSettings shows each allow list with its file (a host must be on
// all of them) and the denied domains.
func (c Config) networkSettings() []Setting {
	var out []Setting
	for i, l := range c.Network.Allow {
		v := strings.Join(l.Domains, ", ")
		if v == "" {
			v = "(none: nothing is reached)"
		}
		if i > 0 {
			v = "and only: " + v
		}
		out = append(out, Setting{Key: "network.allowed_domains", Value: v, Source: l.Source})
	}
	if len(out) == 0 {
		out = append(out, Setting{Key: "network.allowed_domains", Source: "default"})
	}
	d := Setting{Key: "network.denied_domains", Source: "default"}
	if len(c.Network.Deny) > 0 {
		d.Value, d.Source = strings.Join(c.Network.Deny, ", "), c.sources["network.denied_domains"]
	}
	return append(out, d)
}
