package termui

import (
	"fmt"
	"io"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
)

// BenchmarkReadCard renders a full default read window (2000 lines of Go) in colour,
// the largest card the read tool produces.
func BenchmarkReadCard(b *testing.B) {
	lines := make([]card.ReadLine, 2000)
	for i := range lines {
		lines[i] = card.ReadLine{Number: i + 1, Text: fmt.Sprintf("\tx%d := fmt.Sprintf(%q, %d) // line %d", i, "v=%d", i, i)}
	}
	rd := &card.ReadResult{Path: "big.go", Offset: 1, TotalLines: 2000, Lang: "go", Lines: lines}
	r := New(io.Discard, Options{Color: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Result(rd, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}
