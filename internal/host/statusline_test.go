package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"
)

// lines waits for status events whose Line is set, each new one in turn.
func statusLines(t *testing.T, s *Session) (next func() string, stop func()) {
	t.Helper()
	ch := make(chan string, 64)
	var mu sync.Mutex
	last := ""
	sub := s.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == KindStatus && e.Status.Line != "" && e.Status.Line != last {
			last = e.Status.Line
			ch <- last
		}
	})
	return func() string {
		t.Helper()
		select {
		case l := <-ch:
			return l
		case <-t.Context().Done():
			t.Fatal("no status line")
			return ""
		}
	}, sub.Close
}

// Claude Code's statusLine runs as the session opens and as its status
// changes, told the session as Claude Code tells it; its first line is the
// status's Line.
func TestStatusLine(t *testing.T) {
	p := scripted(t, `{"turns": [{"text": "one", "input_tokens": 1000, "output_tokens": 100}]}`)
	root, dir := t.TempDir(), t.TempDir()
	o := options(t, root, dir, p)
	o.Model, o.Version = "claude-sonnet-4-5", "1.2.3"
	o.StatusLine = `cat >> inputs.jsonl; echo >> inputs.jsonl; printf '\033[32mrun %s\033[0m\nnot shown\n' "$(grep -c . inputs.jsonl)"`
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	next, stop := statusLines(t, s)
	defer stop()
	first := next()
	if !strings.HasPrefix(first, "\x1b[32mrun ") || strings.Contains(first, "not shown") {
		t.Fatalf("the first line %q", first)
	}
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	for {
		if l := next(); l != first {
			break // a run after the turn's status
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "inputs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ins []statusLineInput
	for line := range strings.Lines(string(b)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var in statusLineInput
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("its input %q: %v", line, err)
		}
		ins = append(ins, in)
	}
	in := ins[0]
	if in.HookEventName != "Status" || in.SessionID != s.ID() || in.Workspace.ProjectDir != s.Root() || in.Cwd != s.Root() ||
		in.Model.ID != "claude-sonnet-4-5" || in.Version != "1.2.3" || in.TranscriptPath == "" || in.ContextWindow.ContextWindowSize == 0 {
		t.Errorf("the first input %+v", in)
	}
	if last := ins[len(ins)-1]; last.ContextWindow.TotalInputTokens != 1000 || last.Cost.TotalCostUSD == 0 ||
		last.ContextWindow.UsedPercentage <= 0 || last.ContextWindow.UsedPercentage+last.ContextWindow.RemainingPercentage != 100 {
		t.Errorf("after the turn, the input %+v", last)
	}
	if len(ins) > 6 {
		t.Errorf("%d runs for one turn: they should be at most every 300 ms", len(ins))
	}
}

// A status line that fails shows nothing and says why, once.
func TestStatusLineFails(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	warned := make(chan string, 8)
	o := options(t, root, dir, scripted(t, `{"turns": [{"text": "one"}]}`))
	o.Warn = func(s string) { warned <- s }
	o.StatusLine = `echo 'jq: not found' >&2; exit 127`
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	select {
	case w := <-warned:
		if w != "statusLine (echo 'jq: not found' >&2; exit 127): exit status 127: jq: not found" {
			t.Errorf("warned %q", w)
		}
	case <-t.Context().Done():
		t.Fatal("no warning")
	}
	if _, err := s.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.Line != "" || len(warned) > 0 {
		t.Errorf("line %q, warnings %d more", st.Line, len(warned))
	}
}

// A status line that prints without end keeps a bounded line, and one still
// running when the session closes is ended with it.
func TestStatusLineBounds(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	o := options(t, root, dir, scripted(t, `{"turns": [{"text": "one"}]}`))
	o.StatusLine = `head -c 100000 /dev/zero | tr '\0' x; echo; if [ -e ran ]; then echo > running; exec sleep 60; fi; touch ran`
	if err := syscall.Mkfifo(filepath.Join(root, "running"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	next, stop := statusLines(t, s)
	defer stop()
	if l := next(); len(l) != statusLineMax || strings.Trim(l, "x") != "" {
		t.Errorf("a line of %d bytes", len(l))
	}
	if _, err := s.Prompt(context.Background(), "go"); err != nil { // a second run, which hangs
		t.Fatal(err)
	}
	running, err := os.ReadFile(filepath.Join(root, "running")) // returns once the second run writes
	if err != nil || string(running) != "\n" {
		t.Fatalf("%q, %v", running, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
