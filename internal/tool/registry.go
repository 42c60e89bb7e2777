package tool

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/jsonfast"
)

// Registry holds the tools a session offers, in a stable order. Replace
// changes them between model calls (an MCP server's list_changed).
type Registry struct {
	mu     sync.RWMutex
	byName map[string]Tool
	order  []Tool // never changed in place: Tools' callers keep it
	gen    uint64 // counts Replace calls
}

// NewRegistry returns a registry of tools; a duplicate name is a programming error.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range tools {
		if _, dup := r.byName[t.Name()]; dup {
			panic("tool: duplicate tool " + t.Name())
		}
		r.byName[t.Name()] = t
		r.order = append(r.order, t)
	}
	return r
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns every tool in registration order.
func (r *Registry) Tools() []Tool {
	tools, _ := r.Snapshot()
	return tools
}

// Snapshot returns every tool in registration order and the generation they
// are of, which changes with each Replace.
func (r *Registry) Snapshot() ([]Tool, uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.order, r.gen
}

// Replace removes the tools gone says are and adds with after the others;
// a name of with already kept is left out.
func (r *Registry) Replace(gone func(Tool) bool, with []Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	order := slices.DeleteFunc(slices.Clone(r.order), gone)
	byName := make(map[string]Tool, len(order)+len(with))
	for _, t := range order {
		byName[t.Name()] = t
	}
	for _, t := range with {
		if _, dup := byName[t.Name()]; !dup {
			byName[t.Name()] = t
			order = append(order, t)
		}
	}
	r.order, r.byName = order, byName
	r.gen++
}

// Run executes a call; an unknown tool is an error result that lists the real ones.
// An error is a harness failure.
func (r *Registry) Run(ctx context.Context, env Env, name string, args []byte, preview jsontext.Value) (Result, error) {
	t, ok := r.Get(name)
	if !ok {
		return Errorf("Unknown tool %q. Available tools: %s.", name, strings.Join(r.names(), ", ")), nil
	}
	return t.Run(ctx, env, args, preview)
}

// PresentCall presents a call; an unknown tool (an MCP server's, on a replay
// without it) gets the generic card a dynamic tool makes of its logged record.
func (r *Registry) PresentCall(name string, args []byte, preview jsontext.Value) card.Call {
	t, ok := r.Get(name)
	if !ok {
		return presentLogged(name, args, preview)
	}
	return t.PresentCall(args, preview)
}

// Fold lets the call's tool derive session state from its logged result.
func (r *Registry) Fold(s *Session, name string, args []byte, res Result) {
	if t, ok := r.Get(name); ok {
		t.Fold(s, args, res)
	}
}

// ReadMeta reads, at d's position, the meta of a logged result of the tool
// called name, decoded into the tool's memo in the same pass, so that folding
// and presenting the result decode nothing again (session.MetaReader). ok is
// false, d where it was, for a tool without typed meta or meta not in the
// plainest form.
func (r *Registry) ReadMeta(name string, d *jsonfast.Reader) (jsontext.Value, bool) {
	t, ok := r.Get(name)
	if !ok {
		return nil, false
	}
	m, ok := t.(interface {
		readMeta(*jsonfast.Reader) (jsontext.Value, bool)
	})
	if !ok {
		return nil, false
	}
	return m.readMeta(d)
}

// PresentResult presents a result; an unknown tool's is presented as a
// dynamic tool's (its content).
func (r *Registry) PresentResult(name string, args []byte, res Result) card.Result {
	t, ok := r.Get(name)
	if !ok {
		return presentLoggedResult(res)
	}
	return t.PresentResult(args, res)
}

func (r *Registry) names() []string {
	tools := r.Tools()
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name())
	}
	sort.Strings(out)
	return out
}
