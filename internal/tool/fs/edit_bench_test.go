package fs

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// editBenchText is about size bytes of code-like lines in which "count" is common.
func editBenchText(size int) []byte {
	line := "\ttotal := count + offset // count the lines\n"
	return []byte(strings.Repeat(line, size/len(line)))
}

// BenchmarkEditReplaceAll measures the replacement loop itself (matching, line
// counting, hunk tracking and writing) on 16 MiB in memory.
func BenchmarkEditReplaceAll(b *testing.B) {
	text := editBenchText(16 << 20)
	old, repl := []byte("count"), []byte("n")
	first, err := editLocate(text, old, true)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := editReplace(io.Discard, text, old, repl, first, true, newHunkBudget()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEditToolReplaceAll runs the edit tool on a 16 MiB file: read, match,
// atomic write with fsync, stamps. Each iteration swaps the token back.
func BenchmarkEditToolReplaceAll(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/big.go", editBenchText(16<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.New(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	sess := tool.NewSession("bench", ws)
	defer sess.Close()

	runCall(b, sess, Read(), map[string]any{"path": "big.go", "limit": 1})
	swap := [2]editArgs{
		{Path: "big.go", OldString: "count", NewString: "tally", ReplaceAll: true},
		{Path: "big.go", OldString: "tally", NewString: "count", ReplaceAll: true},
	}
	b.SetBytes(16 << 20)
	i := 0
	for b.Loop() {
		if _, _, r := runCall(b, sess, Edit(), swap[i%2]); r.IsError {
			b.Fatal(r.TextOf())
		}
		i++
	}
}

// BenchmarkDiffScattered10k is the overwrite diff of two 10k-line files with 100
// scattered changes (compare diff -u in bench/edit.sh).
func BenchmarkDiffScattered10k(b *testing.B) {
	old, new := diffScattered(10000, 100, 7)
	for b.Loop() {
		diffTexts(old, new, newHunkBudget())
	}
}

// BenchmarkDiffDisjoint100k is the worst case: two 100k-line files with no line
// in common, which must fall back to one whole hunk without quadratic work.
func BenchmarkDiffDisjoint100k(b *testing.B) {
	old, new := diffDisjoint(100000)
	b.ReportAllocs()
	for b.Loop() {
		diffTexts(old, new, newHunkBudget())
	}
}
