package fs

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// zeros is an endless run of NUL bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// The count stops at the bound once the window is complete: the scan reads the
// bound and a chunk at most, and says the file has at least that many lines.
func TestReadScanStopsAtTheBound(t *testing.T) {
	const bound = 1 << 20
	for _, c := range []struct {
		name   string
		head   string
		offset int
		lines  int
	}{
		{"window at the start", strings.Repeat("x\n", 3000), 1, 2000},
		{"one endless line", "start", 1, 1},
	} {
		cr := &countingReader{r: io.MultiReader(strings.NewReader(c.head), zeros{})}
		w, err := readScan(context.Background(), cr, c.offset, 2000, bound, -1)
		if err != nil {
			t.Fatal(err)
		}
		if cr.n > bound+readChunkBytes+1 {
			t.Errorf("%s: scanned %d bytes, bound %d", c.name, cr.n, bound)
		}
		if !w.atLeast || len(w.lines) != c.lines || w.total < w.lines[len(w.lines)-1].Number {
			t.Errorf("%s: atLeast %v, %d lines, total %d", c.name, w.atLeast, len(w.lines), w.total)
		}
	}
	// A file that ends within the bound is counted exactly.
	w, err := readScan(context.Background(), strings.NewReader(strings.Repeat("x\n", 3000)), 1, 10, bound, -1)
	if err != nil || w.atLeast || w.total != 3000 {
		t.Fatalf("small file: %+v, %v", w.total, err)
	}
	// So is one that ends right at it.
	exact := bytes.Repeat([]byte("x\n"), bound/2)
	w, err = readScan(context.Background(), bytes.NewReader(exact), 1, 10, bound, -1)
	if err != nil || w.atLeast || w.total != bound/2 {
		t.Fatalf("file of the bound's size: total %d atLeast %v, %v", w.total, w.atLeast, err)
	}
}

// The start of a 10 GB (sparse) file reads without scanning it all, and the
// result says how many lines it has at least, in its footer and its card.
func TestReadStartOfAHugeFile(t *testing.T) {
	f := newReadFixture(t, false)
	p := f.write("huge.log", readNumbered(3000))
	if err := os.Truncate(p, 10<<30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	text, m := f.mustRead("huge.log", 0, 0)
	if !m.TotalLinesAtLeast || m.TotalLines < 3001 || len(m.Lines) != 2000 {
		t.Fatalf("meta: atLeast %v total %d lines %d", m.TotalLinesAtLeast, m.TotalLines, len(m.Lines))
	}
	if !strings.Contains(text, "Showing lines 1-2000 of at least ") || !strings.Contains(text, "Use offset=2001 to continue.") {
		t.Fatalf("footer: %q", text[len(text)-200:])
	}
	// Its stamp hashes the first stampHashBytes only; it still allows an edit
	// check to tell the file is unchanged.
	if m.Stamp == nil || m.Stamp.Size != 10<<30 {
		t.Fatalf("stamp %+v", m.Stamp)
	}
}

// BenchmarkReadStartOfHugeFile reads the first window of a 10 GB sparse file.
func BenchmarkReadStartOfHugeFile(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/huge.log", readNumbered(3000), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(dir+"/huge.log", 10<<30); err != nil {
		b.Skip(err)
	}
	ws, err := workspace.New(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	env := tool.Env{Session: tool.NewSession("bench", ws)}
	for b.Loop() {
		if r, m := readFile(context.Background(), env, ReadParams{Path: "huge.log"}); r.IsError || !m.TotalLinesAtLeast {
			b.Fatal(r.TextOf())
		}
	}
}
