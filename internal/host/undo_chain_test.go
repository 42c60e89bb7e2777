package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
)

// walks is how many times the session's checkpoint store walked the tree.
func walks(t *testing.T, s *Session) int64 {
	t.Helper()
	st, err := s.checkpointStore()
	if err != nil {
		t.Fatal(err)
	}
	return st.Walks()
}

// settled waits for the session's snapshots in the background.
func settled(t *testing.T, s *Session) {
	t.Helper()
	s.settle(t.Context())
}

// How many walks of the tree prompts cost: none for a prompt whose files
// only the file tools changed, or that changed nothing; one for a prompt that
// ran a command (its "after", which is the next prompt's "before"); one at
// open. Each kind of prompt still undoes what it did.
func TestCheckpointWalks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns string // the scripted turns of each of three prompts
		walks int64  // after the three prompts, the open's included
		undo  map[string]string
	}{
		{"file tools", `{"tool_calls": [{"id": "w%d", "name": "write", "args": {"path": "new%d.txt", "content": "made\n"}}]}, {"text": "ok"}`,
			1, map[string]string{"a.txt": "a\n", "new1.txt": "made\n", "new2.txt": "made\n"}},
		{"reads", `{"tool_calls": [{"id": "r%d", "name": "read", "args": {"path": "a.txt"}}]}, {"text": "ok%d"}`,
			1, map[string]string{"a.txt": "a\n"}},
		{"a command", `{"tool_calls": [{"id": "b%d", "name": "bash", "args": {"command": "echo made > cmd%d.txt"}}]}, {"text": "ok"}`,
			4, map[string]string{"a.txt": "a\n", "cmd1.txt": "made\n", "cmd2.txt": "made\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			put(t, root, "a.txt", "a\n")
			var turns []string
			for i := 1; i <= 3; i++ {
				turns = append(turns, fmt.Sprintf(tc.turns, i, i))
			}
			o := options(t, root, dir, scripted(t, `{"turns": [`+strings.Join(turns, ",")+`]}`))
			o.Ask = true
			s, err := Create(o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			sub := (&approver{d: agent.AllowOnce}).watch(s)
			defer sub.Close()
			for i := range 3 {
				if _, err := s.Prompt(t.Context(), fmt.Sprint("prompt ", i+1)); err != nil {
					t.Fatal(err)
				}
			}
			settled(t, s)
			if got := walks(t, s); got != tc.walks {
				t.Errorf("three prompts walked the tree %d times, want %d", got, tc.walks)
			}
			if _, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both}); err != nil {
				t.Fatal(err)
			}
			if got := files(t, root); !equal(got, tc.undo) {
				t.Errorf("after /undo of the third prompt the workspace is %q, want %q", got, tc.undo)
			}
		})
	}
}

// gatedGit puts a git on PATH whose first ls-files (the walk at open) waits
// until release is called.
func gatedGit(t *testing.T) (release func()) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	gate := filepath.Join(bin, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	once := filepath.Join(bin, "once")
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
	if [ "$a" = ls-files ] && mkdir %q 2>/dev/null; then cat %q >/dev/null; break; fi
done
exec %q "$@"
`, once, gate, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		f, err := os.OpenFile(gate, os.O_WRONLY, 0) // the waiting cat reads EOF
		if err != nil {
			t.Error(err)
			return
		}
		_ = f.Close()
	}
	t.Cleanup(release)
	return release
}

// The first prompt does not wait for the walk at open, though it changes
// files: the files it changes are read as they were before it, and its
// checkpoint names its "before" when the walk ends. A command waits for it.
func TestFirstPromptDoesNotWaitForTheWalk(t *testing.T) {
	release := gatedGit(t)
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}]},
		{"tool_calls": [{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "one", "new_string": "two"}},
			{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "b\n"}}]},
		{"text": "Done."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(s)
	defer sub.Close()
	// A prompt that waited for the walk would end cancelled here.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	stop, err := s.Prompt(ctx, "edit")
	if err != nil || stop != agent.StopEndTurn {
		t.Fatalf("the prompt ended %v, %v while the walk at open was held", stop, err)
	}
	if got := files(t, root); got["a.txt"] != "two\n" || got["b.txt"] != "b\n" {
		t.Fatalf("the prompt left %q", got)
	}
	release()
	settled(t, s)
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var before, after *session.Checkpoint
	for _, r := range recs {
		if r.Type == session.TypeCheckpoint && r.Checkpoint.Phase == session.PhaseBefore {
			before = r.Checkpoint
		} else if r.Type == session.TypeCheckpoint {
			after = r.Checkpoint
		}
	}
	if before == nil || before.Tree != "" || after == nil || after.Before == "" || after.Tree == "" {
		t.Fatalf("before %+v, after %+v: the after must name the before taken late", before, after)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both}); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "one\n"}) {
		t.Errorf("after /undo the workspace is %q", got)
	}
}

// A file the user changed between two prompts, that the second one edits:
// undoing the second prompt gives back the user's version, not the first
// prompt's "after", though no walk saw the user's change.
func TestUndoKeepsTheUsersChangeBetweenPrompts(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "b\n"}}]},
		{"text": "One."},
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "a.txt"}}]},
		{"tool_calls": [{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "user", "new_string": "agent"}}]},
		{"text": "Two."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(s)
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	put(t, root, "a.txt", "the user\n")
	if _, err := s.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root)["a.txt"]; got != "the agent\n" {
		t.Fatalf("the second prompt left a.txt as %q", got)
	}
	settled(t, s)
	if got := walks(t, s); got != 1 {
		t.Errorf("%d walks, want only the one at open", got)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both}); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "the user\n", "b.txt": "b\n"}) {
		t.Errorf("after /undo of the second prompt the workspace is %q", got)
	}
}

// A file the user changed between two prompts, when the second runs a
// command: the walk after the command sees the user's change too, but the
// file was last written before the prompt began, so undoing the prompt
// leaves it as the user made it and takes back only what the command did.
func TestUndoOfACommandKeepsTheUsersChangeBetweenPrompts(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo b > b.txt"}}]},
		{"text": "One."},
		{"tool_calls": [{"id": "b2", "name": "bash", "args": {"command": "echo c > c.txt"}}]},
		{"text": "Two."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(s)
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	settled(t, s)
	put(t, root, "a.txt", "the user\n")
	// The user's edit was made a while before the next prompt.
	earlier := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(root, "a.txt"), earlier, earlier); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	settled(t, s)
	if _, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both}); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "the user\n", "b.txt": "b\n"}) {
		t.Errorf("after /undo of the second prompt the workspace is %q", got)
	}
}

// An /undo sent while a prompt's span is still open (a consumer saw its
// turn_end record, logged before the prompt's "after" is begun) waits for the
// span to end and undoes that prompt, not the one before it.
func TestUndoWaitsForTheOpenPrompt(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "a.txt", "content": "a\n"}}]},
		{"text": "One."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	approve := (&approver{d: agent.AllowOnce}).watch(s)
	defer approve.Close()
	if _, err := s.Prompt(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	// The second prompt's span, as a turn opens it, with a command's change.
	n := s.beginCheckpoint(t.Context())
	s.effect(t.Context(), nil, true)
	put(t, root, "b.txt", "b\n")
	undone := make(chan error, 1)
	go func() {
		_, err := s.Submit(context.Background(), Input{Text: "/undo", Where: Both})
		undone <- err
	}()
	select {
	case err := <-undone:
		t.Fatalf("/undo returned (%v) while the prompt's span was open", err)
	case <-time.After(200 * time.Millisecond): // it waits: nothing to wait on but time
	}
	s.endCheckpoint(n)
	if err := <-undone; err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "a\n"}) {
		t.Errorf("after an /undo sent while the second prompt's span was open the workspace is %q", got)
	}
}

// Two prompts of file tools while the walk at open is held: the walk, taken
// after both, sees both prompts' files, which are laid back out of it, so
// undoing the second prompt, then rewinding to before the first, each take
// back exactly what they did.
func TestLateWalkKeepsEachPromptsChanges(t *testing.T) {
	release := gatedGit(t)
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "b.txt", "content": "b\n"}}]},
		{"text": "One."},
		{"tool_calls": [{"id": "w2", "name": "write", "args": {"path": "c.txt", "content": "c\n"}},
			{"id": "e2", "name": "write", "args": {"path": "a.txt", "content": "two\n"}}]},
		{"text": "Two."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(s)
	defer sub.Close()
	for _, text := range []string{"first", "second"} {
		if _, err := s.Prompt(t.Context(), text); err != nil {
			t.Fatal(err)
		}
	}
	release()
	settled(t, s)
	for _, step := range []struct {
		text string
		want map[string]string
	}{
		{"/undo", map[string]string{"a.txt": "one\n", "b.txt": "b\n"}},
		{"/rewind 1", map[string]string{"a.txt": "one\n"}},
	} {
		want := step.want
		if _, err := s.Submit(t.Context(), Input{Text: step.text, Where: Both}); err != nil {
			t.Fatal(err)
		}
		if got := files(t, root); !equal(got, want) {
			t.Errorf("after an /undo the workspace is %q, want %q", got, want)
		}
	}
}
