package models

import (
	"math"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		model    string
		wantFrom string // the table entry it must resolve to; "" for the default
	}{
		{"claude-sonnet-5-5", "claude-sonnet-5-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"anthropic/claude-opus-4-1", "claude-opus-4-1"},
		{"claude-opus-4", "claude-opus-4"},
		{"claude-opus-4-1", "claude-opus-4-1"}, // not claude-opus-4 + "-1"
		{"claude-opus-4-7", ""},                // a newer model, not a snapshot of claude-opus-4
		{"claude-sonnet-4-6", ""},
		{"gpt-5", "gpt-5"},
		{"gpt-5-mini", "gpt-5-mini"},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"gpt-5.5-2026-04-23", "gpt-5.5"},
		{"gpt-5.4", ""}, // not gpt-5
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-audio-preview", ""},
		{"llama3.1:8b", ""},
		// The clouds' spellings of Claude's ids.
		{"global.anthropic.claude-sonnet-5-5-v1:0", "claude-sonnet-5-5"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku"},
		{"anthropic.claude-opus-4-6-v1", "claude-opus-4-6"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		{"claude-opus-4-1@20250805", "claude-opus-4-1"},
		{"meta.llama3-1-70b-instruct-v1:0", ""},
		{"", ""},
	} {
		t.Run(tc.model, func(t *testing.T) {
			got := Lookup(tc.model)
			if got.ID != tc.model {
				t.Errorf("ID = %q, want the name asked for", got.ID)
			}
			if tc.wantFrom == "" {
				if got.Known || got.Priced || got.ContextWindow != DefaultContextWindow || got.MaxOutput != DefaultMaxOutput {
					t.Errorf("an unknown model got %+v, want the defaults", got)
				}
				return
			}
			want := entry(t, tc.wantFrom)
			want.ID = tc.model
			if got != want {
				t.Errorf("Lookup(%q) = %+v, want %+v", tc.model, got, want)
			}
		})
	}
}

func entry(t *testing.T, id string) Info {
	t.Helper()
	for _, e := range table {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no table entry %q", id)
	return Info{}
}

// TestTable checks the table's own consistency: a typo in a figure that makes
// it impossible (output over the window, a price without a rate) fails here.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range table {
		if seen[e.ID] {
			t.Errorf("%s twice", e.ID)
		}
		seen[e.ID] = true
		if e.Provider != "anthropic" && e.Provider != "openai" {
			t.Errorf("%s: provider %q", e.ID, e.Provider)
		}
		if !e.Known || e.ContextWindow < 100_000 || e.MaxOutput < 4096 || e.MaxOutput > e.ContextWindow {
			t.Errorf("%s: window %d, output %d", e.ID, e.ContextWindow, e.MaxOutput)
		}
		if e.Priced && (e.InputPrice <= 0 || e.OutputPrice < e.InputPrice) {
			t.Errorf("%s: price %v in, %v out", e.ID, e.InputPrice, e.OutputPrice)
		}
		if !e.Priced && (e.InputPrice != 0 || e.OutputPrice != 0) {
			t.Errorf("%s: unpriced but has a price", e.ID)
		}
		if got := Lookup(e.ID); got != e {
			t.Errorf("Lookup(%s) = %+v, want its own entry", e.ID, got)
		}
	}
	if len(Builtin("anthropic")) == 0 || len(Builtin("openai")) == 0 || len(Builtin("")) != len(table) {
		t.Error("Builtin does not split the table by provider")
	}
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		model string
		u     Usage
		want  float64
		ok    bool
	}{
		{"claude-sonnet-4-5", Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 18, true},
		{"claude-sonnet-4-5-20250929", Usage{InputTokens: 2000, OutputTokens: 500}, 0.006 + 0.0075, true},
		{"claude-opus-5-5", Usage{InputTokens: 10_000, OutputTokens: 1000}, 0.04 + 0.02, true},
		{"gpt-4o-mini", Usage{InputTokens: 1_000_000}, 0.15, true},
		{"claude-haiku-5-5", Usage{InputTokens: 1000}, 0, false},
		{"llama3", Usage{InputTokens: 1000}, 0, false},
	} {
		got, ok := Cost(tc.model, tc.u)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v, %v; want %v, %v", tc.model, tc.u, got, ok, tc.want, tc.ok)
		}
	}
}

// Claude Code's aliases name the newest of a family in the table; other
// names, and ids, are left as they are.
func TestClaudeAlias(t *testing.T) {
	newest := func(family string) string {
		for _, e := range table {
			if strings.HasPrefix(e.ID, "claude-"+family+"-") {
				return e.ID
			}
		}
		t.Fatalf("no %s in the table", family)
		return ""
	}
	for in, want := range map[string]string{
		"opus": newest("opus"), "Sonnet": newest("sonnet"), " haiku ": newest("haiku"), "fable": newest("fable"),
		"sonnet[1m]": newest("sonnet"), "opusplan": newest("opus"), "default": DefaultAnthropic,
		"claude-opus-4-1": "claude-opus-4-1", "gpt-5.5": "gpt-5.5", "opus-like": "opus-like", "": "",
	} {
		if got := ClaudeAlias(in); got != want {
			t.Errorf("ClaudeAlias(%q) = %q, want %q", in, got, want)
		}
	}
	// The table keeps a family's newest first: the alias relies on it.
	if got := ClaudeAlias("opus"); Lookup(got).ContextWindow != Lookup("opus").ContextWindow || !Lookup("opus").Known {
		t.Errorf("Lookup(opus) = %+v", Lookup("opus"))
	}
}
