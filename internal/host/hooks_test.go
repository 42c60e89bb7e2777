package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// The context a SessionStart and a UserPromptSubmit hook add is logged, so a
// reloaded session sends byte for byte what the live one sends, though the
// hook would print something else if it ran again; a prompt a hook blocks is
// neither sent nor logged.
func TestPromptHooks(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	hs := []hooks.Hook{
		{Event: hooks.SessionStart, Matcher: "startup", Command: `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo "start $n"`},
		{Event: hooks.UserPromptSubmit, Command: `if grep -q secret; then echo "no secrets, please" >&2; exit 2; fi; echo "on branch main"`},
	}
	p := scripted(t, `{"turns": [{"text": "one"}]}`)
	o := options(t, root, dir, p)
	o.Hooks = hs
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	first := p.last(t).Messages[0]
	var texts []string
	for _, part := range first.Parts {
		texts = append(texts, part.Text)
	}
	want := []string{"SessionStart hook additional context:\nstart 1", "UserPromptSubmit hook additional context:\non branch main", "hello"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("the first message holds %q, want %q", texts, want)
	}
	stop, err := s.Prompt(t.Context(), "here is my secret")
	if err != nil || stop != agent.StopRefusal {
		t.Errorf("a blocked prompt: %v, %v; want a refusal", stop, err)
	}
	path := s.Path()
	snapshot, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Provider, _ = script.Parse([]byte(`{"turns": [{"text": "ok"}]}`))
	if _, err := s.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	liveReq := p.last(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(requestBytes(t, liveReq), "secret") {
		t.Errorf("the blocked prompt reached the model: %s", requestBytes(t, liveReq))
	}
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var users, blocks int
	for _, r := range recs {
		if r.Type == session.TypeUser {
			users++
		}
		if r.Hook != nil && r.Hook.Decision == "block" {
			blocks++
		}
	}
	if users != 2 || blocks != 1 {
		t.Errorf("%d prompts and %d blocks logged, want 2 and 1", users, blocks)
	}

	snapDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(snapDir, filepath.Base(path)), snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	ps := scripted(t, `{"turns": [{"text": "ok"}]}`)
	so := options(t, root, snapDir, ps)
	so.Hooks = hs
	snap, err := Load(so, filepath.Join(snapDir, filepath.Base(path)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Prompt(t.Context(), "next"); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if want, got := requestBytes(t, liveReq), requestBytes(t, ps.last(t)); got != want {
		t.Errorf("the reloaded session's request differs from the live one's:\nlive:     %s\nreloaded: %s", want, got)
	}
}
