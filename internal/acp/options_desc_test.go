package acp

import (
	"fmt"
	"math"
	"testing"

	"github.com/dsh-dev/dsh/internal/host"
)

// TestModelDesc checks modelDesc against the format it spells out by hand.
func TestModelDesc(t *testing.T) {
	models := []host.Model{
		{Known: false, ContextWindow: 200_000},
		{Known: true, ContextWindow: 200_000},
		{Known: true, ContextWindow: 1_047_576, Priced: true, InputPrice: 0.4, OutputPrice: 1.6},
		{Known: true, ContextWindow: 999, Priced: true, InputPrice: 0.005, OutputPrice: 0.015},
		{Known: true, ContextWindow: 128_000, Priced: true, InputPrice: 1.25, OutputPrice: 10},
		{Known: true, ContextWindow: 1, Priced: true, InputPrice: math.Inf(1), OutputPrice: -2.675},
	}
	for _, id := range []string{"claude-sonnet-4-5", "gpt-5-nano", "claude-haiku-5-5", "llama3"} {
		models = append(models, host.LookupModel(id))
	}
	for _, m := range models {
		got := modelDesc(m)
		if !m.Known {
			if got != nil {
				t.Errorf("modelDesc(%+v) = %q, want none", m, *got)
			}
			continue
		}
		want := fmt.Sprintf("%dk context", m.ContextWindow/1000)
		if m.Priced {
			want += fmt.Sprintf(", $%.2f/$%.2f per million tokens in/out", m.InputPrice, m.OutputPrice)
		}
		if got == nil || *got != want {
			t.Errorf("modelDesc(%+v) = %v, want %q", m, got, want)
		}
	}
}
