package tool

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
)

func named(t *testing.T, name string) Tool {
	t.Helper()
	d, err := NewDynamic(Dynamic{Name: name, Description: name, Schema: jsontext.Value(`{"type":"object"}`), Kind: card.ToolOther,
		Execute: func(context.Context, Env, jsontext.Value) (Result, error) { return Text(name), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRegistryReplace: Replace swaps the tools gone names for others, keeps
// the rest in their order, never lets a new tool shadow a kept one, and moves
// the generation on; Tools taken before are not changed under their holder.
func TestRegistryReplace(t *testing.T) {
	tests := []struct {
		name string
		with []string
		want []string
	}{
		{"swapped", []string{"x_c"}, []string{"a", "b", "x_c"}},
		{"all gone", nil, []string{"a", "b"}},
		{"a kept name stays the kept tool", []string{"a", "x_d"}, []string{"a", "b", "x_d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept := named(t, "a")
			reg := NewRegistry(kept, named(t, "x_a"), named(t, "b"), named(t, "x_b"))
			before, gen := reg.Snapshot()
			var with []Tool
			for _, n := range tt.with {
				with = append(with, named(t, n))
			}
			reg.Replace(func(t Tool) bool { return strings.HasPrefix(t.Name(), "x_") }, with)
			var got []string
			for _, tl := range reg.Tools() {
				got = append(got, tl.Name())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tools = %q, want %q", got, tt.want)
			}
			if _, g := reg.Snapshot(); g == gen {
				t.Error("the generation did not change")
			}
			if len(before) != 4 || before[1].Name() != "x_a" {
				t.Errorf("the tools taken before changed: %d", len(before))
			}
			if a, _ := reg.Get("a"); a != kept {
				t.Error("a new tool replaced a kept one of the same name")
			}
			if _, ok := reg.Get("x_a"); ok {
				t.Error("a gone tool is still found")
			}
		})
	}
}
