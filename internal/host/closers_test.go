package host

import (
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
)

type closer struct{ n atomic.Int32 }

func (c *closer) Close() error { c.n.Add(1); return nil }

// TestClosers: the session owns its closers (its MCP servers) from Create or
// Load on: they are closed once when it closes, and when opening it fails.
func TestClosers(t *testing.T) {
	dir := t.TempDir()
	c := &closer{}
	s, err := Create(Options{SessionDir: dir, Root: t.TempDir(), Closers: []io.Closer{c}})
	if err != nil {
		t.Fatal(err)
	}
	if c.n.Load() != 0 {
		t.Fatal("closed while the session is open")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if n := c.n.Load(); n != 1 {
		t.Errorf("closed %d times by Close, want once", n)
	}

	for name, open := range map[string]func(Options) error{
		"create in a missing root": func(o Options) error { o.Root = filepath.Join(dir, "missing"); _, err := Create(o); return err },
		"load a missing log":       func(o Options) error { _, err := Load(o, filepath.Join(dir, "nope.jsonl"), nil); return err },
	} {
		c := &closer{}
		if err := open(Options{SessionDir: dir, Root: t.TempDir(), Closers: []io.Closer{c}}); err == nil {
			t.Errorf("%s: no error", name)
		}
		if n := c.n.Load(); n != 1 {
			t.Errorf("%s: closed %d times, want once", name, n)
		}
	}
}
