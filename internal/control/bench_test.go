package control

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// BenchmarkJoin is a client joining a live session of 10 000 records: the
// hello, every record so far, caught up.
func BenchmarkJoin(b *testing.B) {
	dir, root := b.TempDir(), b.TempDir()
	l, err := session.Create(dir, "20261205-000000-benchbench", root, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("word ", 40)
	for i := range 10000 {
		if err := l.Append(session.Record{Type: session.TypeAssistant, Text: fmt.Sprint(i, text)}); err != nil {
			b.Fatal(err)
		}
	}
	path := l.Path()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	p, _ := script.Parse([]byte(`{"turns": [{"text": "ok"}]}`))
	s, err := host.Load(host.Options{SessionDir: dir, Root: root, Live: Serve,
		Provider: func() (provider.Provider, error) { return p, nil }}, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		c, err := DialSession(b.Context(), dir, s.ID(), DialOptions{Replay: func(session.Record) { n++ }})
		if err != nil {
			b.Fatal(err)
		}
		if n != 10001 {
			b.Fatalf("replayed %d records", n)
		}
		_ = c.Close()
	}
}
