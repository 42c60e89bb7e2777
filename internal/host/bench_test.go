package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// grown returns a session log of n read calls (prompts of 40), logged through
// the host.
func grown(b *testing.B, n int) (root, dir, path string) {
	b.Helper()
	root, dir = b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("a line of text\n", 40)), 0o644); err != nil {
		b.Fatal(err)
	}
	var turns []script.Turn
	for p := range n / 40 {
		var tc []script.ToolCall
		for i := range 40 {
			tc = append(tc, script.ToolCall{ID: fmt.Sprintf("p%d-%d", p, i), Name: "read", Args: []byte(`{"path":"a.txt"}`)})
		}
		turns = append(turns, script.Turn{ToolCalls: tc}, script.Turn{Text: "ok"})
	}
	js, _ := json.Marshal(map[string]any{"turns": turns})
	sp, err := script.Parse(js)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Create(options(&testing.T{}, root, dir, &taped{Provider: sp}))
	if err != nil {
		b.Fatal(err)
	}
	for range n / 40 {
		if _, err := s.Prompt(b.Context(), "go"); err != nil {
			b.Fatal(err)
		}
	}
	path = s.Path()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return root, dir, path
}

// BenchmarkLoad is session/load without the protocol: the log folded into the
// session and every record presented, as a consumer's history view does.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000} {
		root, dir, path := grown(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				var pres *view.Presenter
				s, err := Load(options(&testing.T{}, root, dir, nil), path, func(s *Session, r session.Record) error {
					if pres == nil {
						pres = view.NewPresenter(s.Registry())
					}
					pres.Present(r)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
			}
		})
	}
}

// BenchmarkCreate is what session/new costs the host: a session assembled
// (tools, system prompt, agent) around a new log, and closed. It reports the
// heap an open session keeps.
func BenchmarkCreate(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	var kept []*Session
	for b.Loop() {
		s, err := Create(options(&testing.T{}, root, dir, &taped{Provider: &script.Script{}}))
		if err != nil {
			b.Fatal(err)
		}
		kept = append(kept, s)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, s := range kept {
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	clear(kept) // the sessions themselves may go now
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(before.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc))/float64(b.N), "kept-B/session")
}
