package web

import (
	"bytes"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
)

// BenchmarkSessionPage renders the page of a 1000-call session from its log.
func BenchmarkSessionPage(b *testing.B) {
	dir := b.TempDir()
	s, _ := testServer(b, dir)
	bigSession(b, dir, bigID, 1000)
	recs, err := session.ReadFile(dir + "/" + bigID + ".jsonl")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		var w bytes.Buffer
		out{&w}.session(s.sessionPage(bigID, recs, true))
	}
}
