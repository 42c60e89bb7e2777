package termui

import (
	"fmt"
	"io"
	"strings"
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

// BenchmarkProgressLongLine renders live output that is one long line (a
// command printing NULs or minified JSON), which is wrapped to the width.
func BenchmarkProgressLongLine(b *testing.B) {
	chunk := strings.Repeat("x", 1<<20)
	r := New(io.Discard, Options{Width: 100})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if err := r.Progress(chunk); err != nil {
			b.Fatal(err)
		}
	}
}
