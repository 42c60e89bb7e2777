package host

import (
	"os/exec"
	"testing"
)

// A session created with LiveLater starts its first checkpoint walk at
// GoLive, not before: the consumer's answer does not share the CPU with it.
// Once started it is the walk a session starts at open.
func TestLiveLaterHoldsTheFirstWalk(t *testing.T) {
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
	defer func() { _ = s.Close() }()
	base := func() *snapJob {
		s.undo.chain.mu.Lock()
		defer s.undo.chain.mu.Unlock()
		return s.undo.chain.base
	}
	if base() != nil {
		t.Fatal("the first walk started before GoLive")
	}
	s.GoLive()
	s.GoLive() // once
	j := base()
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
	defer func() { _ = s.Close() }()
	if _, err := s.Prompt(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	s.undo.chain.mu.Lock()
	before := s.undo.chain.base
	s.undo.chain.mu.Unlock()
	s.GoLive()
	s.undo.chain.mu.Lock()
	after := s.undo.chain.base
	s.undo.chain.mu.Unlock()
	if before == nil || after != before {
		t.Fatalf("the prompt's walk %p, after GoLive %p: want the same one", before, after)
	}
	<-after.done
	if got := walks(t, s); got != 1 {
		t.Errorf("walked the tree %d times, want once", got)
	}
}
