package tool

import (
	"context"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

// Registry holds the tools a session offers, in a stable order.
type Registry struct {
	byName map[string]Tool
	order  []Tool
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
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns every tool in registration order.
func (r *Registry) Tools() []Tool { return r.order }

// Run executes a call; an unknown tool is an error result that lists the real ones.
// An error is a harness failure.
func (r *Registry) Run(ctx context.Context, env Env, name string, args []byte, preview jsontext.Value) (Result, error) {
	t, ok := r.byName[name]
	if !ok {
		return Errorf("Unknown tool %q. Available tools: %s.", name, strings.Join(r.names(), ", ")), nil
	}
	return t.Run(ctx, env, args, preview)
}

// PresentCall presents a call; an unknown tool (an MCP server's, on a replay
// without it) gets the generic card a dynamic tool makes of its logged record.
func (r *Registry) PresentCall(name string, args []byte, preview jsontext.Value) card.Call {
	t, ok := r.byName[name]
	if !ok {
		return presentLogged(name, args, preview)
	}
	return t.PresentCall(args, preview)
}

// Fold lets the call's tool derive session state from its logged result.
func (r *Registry) Fold(s *Session, name string, args []byte, res Result) {
	if t, ok := r.byName[name]; ok {
		t.Fold(s, args, res)
	}
}

// PresentResult presents a result; an unknown tool's is presented as a
// dynamic tool's (its content).
func (r *Registry) PresentResult(name string, args []byte, res Result) card.Result {
	t, ok := r.byName[name]
	if !ok {
		return presentLoggedResult(res)
	}
	return t.PresentResult(args, res)
}

func (r *Registry) names() []string {
	out := make([]string, 0, len(r.order))
	for _, t := range r.order {
		out = append(out, t.Name())
	}
	sort.Strings(out)
	return out
}
