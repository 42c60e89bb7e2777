package host

import (
	"os/exec"
	"testing"
)

// A session created with LiveLater starts its first checkpoint walk at
// GoLive, not before: the consumer's answer does not share the CPU with it.
// Once started it is the walk a session starts at open.
func TestLiveLaterHoldsTheFirstWalk(t *testing.T) {
	s := liveLater(t)
	if base(s) != nil {
		t.Fatal("the first walk started before GoLive")
	}
	s.GoLive()
	s.GoLive() // once
	j := base(s)
	if j == nil {
		t.Fatal("no walk after GoLive")
	}
	<-j.done
	if j.err != nil {
		t.Fatal(j.err)
	}
	if got := walks(t, s); got != 1 {
		t.Errorf("walked the tree %d times, want the one at open", got)
	}
}

// A prompt that comes before GoLive (a client that did not wait) begins its
// own walk; GoLive after it does not start another over it.
func TestLiveLaterAfterAPrompt(t *testing.T) {
	s := liveLater(t)
	if _, err := s.Prompt(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	before := base(s)
	s.GoLive()
	after := base(s)
	if before == nil || after != before {
		t.Fatalf("the prompt's walk %p, after GoLive %p: want the same one", before, after)
	}
	<-after.done
	if got := walks(t, s); got != 1 {
		t.Errorf("walked the tree %d times, want once", got)
	}
}

// liveLater is a session of a workspace with git, created with LiveLater.
func liveLater(t *testing.T) *Session {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "a\n")
	o := options(t, root, dir, scripted(t, `{"turns": [{"text": "ok"}]}`))
	o.LiveLater = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// base is the session's newest snapshot job.
func base(s *Session) *snapJob {
	s.undo.chain.mu.Lock()
	defer s.undo.chain.mu.Unlock()
	return s.undo.chain.base
}
