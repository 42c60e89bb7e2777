package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
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

// BenchmarkReloadHolds is what an open session holds after a reload of 80
// writes of 512 KiB (heap-MiB after a collection): the model context's copy
// of their arguments (40 MiB), and what the tools' memos keep besides.
func BenchmarkReloadHolds(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	id := session.NewID(time.Now())
	l, err := session.Create(dir, id, root, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 80 {
		cid := fmt.Sprintf("c%d", i)
		res := tool.Result{Content: []card.Content{card.Text("Created.")}}
		for _, r := range []session.Record{
			{Type: session.TypeToolCall, CallID: cid, Name: "write", Args: fmt.Appendf(nil, `{"path":"f%d.txt","content":%q}`, i, strings.Repeat("y", 512<<10))},
			{Type: session.TypeToolResult, CallID: cid, Result: &res}} {
			if err := l.Append(r); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	var held float64
	for b.Loop() {
		s, err := Load(options(&testing.T{}, root, dir, nil), filepath.Join(dir, id+".jsonl"), func(*Session, session.Record) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		held = float64(ms.HeapAlloc) / (1 << 20)
		_ = s.Close()
	}
	b.ReportMetric(held, "heap-MiB")
}
