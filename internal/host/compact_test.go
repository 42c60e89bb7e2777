package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// recording plays a script and keeps the requests it is sent.
type recording struct {
	*script.Script
	mu   sync.Mutex
	reqs []provider.Request
}

func (r *recording) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Script.Stream(ctx, req, onDelta)
}

// texts are the text parts of a request's messages.
func texts(req provider.Request) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Type == provider.PartText {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

func scriptOf(t *testing.T, js string) *recording {
	t.Helper()
	s, err := script.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return &recording{Script: s}
}

// A session past a small window compacts before its next model call; replayed,
// the compaction is a card where it happened, and the reloaded session
// continues from the compacted context. /compact runs it on request.
func TestSessionCompactsAndReloadsCompacted(t *testing.T) {
	big := strings.Repeat("old answer ", 400)
	rec := scriptOf(t, `{"turns":[{"text":"`+big+`"},{"text":"SUMMARY one"},{"text":"answer two"}]}`)
	o := Options{SessionDir: t.TempDir(), Root: t.TempDir(), Model: "m",
		Provider: func() (provider.Provider, error) { return rec, nil }}
	// The window: the system prompt and tools, which every request carries, and
	// room for 600 tokens more before the threshold.
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	fixed := s.ContextUsage().Tokens
	t.Logf("the system prompt and tools: about %d tokens", fixed)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o.ContextWindow = (fixed + 600) * 5 / 4
	if s, err = Create(o); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		if _, err := s.Prompt(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(rec.reqs))
	}
	got := texts(rec.reqs[2])
	if len(got) != 2 || !strings.HasSuffix(got[0], "SUMMARY one") || got[1] != "two" {
		t.Errorf("request after the compaction holds %q, want the summary and two", got)
	}
	if cu := s.ContextUsage(); cu.Window != o.ContextWindow || cu.Tokens <= fixed || cu.Tokens >= fixed+600 {
		t.Errorf("ContextUsage = %+v", cu)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(t.Context(), ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Compact after Close = %v", err)
	}

	rec2 := scriptOf(t, `{"turns":[{"text":"answer three"},{"text":"SUMMARY two"}]}`)
	o.Provider = func() (provider.Provider, error) { return rec2, nil }
	var cards []string
	var pres *view.Presenter
	l, err := Load(o, path, func(s *Session, r session.Record) error {
		if pres == nil {
			pres = view.NewPresenter(s.Registry())
		}
		it := pres.Present(r)
		if r.Type == session.TypeCompaction {
			c, ok1 := it.Call.(*card.GenericCall)
			res, ok2 := it.Result.(*card.GenericResult)
			if !ok1 || !ok2 || len(res.Content) != 1 {
				t.Fatalf("compaction presented as %#v, %#v", it.Call, it.Result)
			}
			cards = append(cards, c.Title+": "+res.Content[0].Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if want := []string{"Compacted the conversation: SUMMARY one"}; !slices.Equal(cards, want) {
		t.Errorf("replayed cards %q, want %q", cards, want)
	}
	if _, err := l.Prompt(t.Context(), "three"); err != nil {
		t.Fatal(err)
	}
	got = texts(rec2.reqs[0])
	if len(got) != 4 || !strings.HasSuffix(got[0], "SUMMARY one") || got[1] != "two" || got[2] != "answer two" || got[3] != "three" {
		t.Errorf("request after the reload holds %q", got)
	}
	for _, g := range got {
		if strings.Contains(g, "old answer") || g == "one" {
			t.Errorf("the reloaded session sent a compacted turn: %.40q", g)
		}
	}
	if err := l.Compact(t.Context(), "tests"); err != nil {
		t.Fatal(err)
	}
	if last := texts(rec2.reqs[1]); !strings.Contains(last[len(last)-1], "focus on: tests") {
		t.Errorf("/compact tests sent %.80q", last[len(last)-1])
	}
}
