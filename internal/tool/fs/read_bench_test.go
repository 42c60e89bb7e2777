package fs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// BenchmarkReadTail reads a 2000-line window at the end of a 64 MiB file of ~640k
// lines: the whole file is scanned (totalLines is exact) and the tail is kept.
// bench/read.sh runs the same read on a 1 GiB file against wc -l and sed.
func BenchmarkReadTail(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "big.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 8)
	lines := 0
	for size := 0; size < 64<<20; lines++ {
		n, _ := fmt.Fprintf(w, "%07d %s\n", lines+1, pad[:50+lines%90])
		size += n
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.New(root, false)
	if err != nil {
		b.Fatal(err)
	}
	env := tool.Env{Session: tool.NewSession("bench", ws)}
	p := ReadParams{Path: "big.txt", Offset: lines - 1999, Limit: 2000}

	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		r, _ := readFile(context.Background(), env, p)
		if r.IsError {
			b.Fatal(r.TextOf())
		}
	}
	b.StopTimer()
	_, m := readFile(context.Background(), env, p)
	if ok := m != nil; !ok || m.TotalLines != lines || m.Lines[0].Number != lines-1999 {
		b.Fatalf("wrong window: ok=%v total=%d want %d", ok, m.TotalLines, lines)
	}
}
