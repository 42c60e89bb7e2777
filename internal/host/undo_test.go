package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/session"
)

func put(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files is the workspace's regular files and their contents, .git aside.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// approver answers every permission request with d and keeps the cards it saw.
type approver struct {
	mu    sync.Mutex
	d     agent.Decision
	cards []card.Call
}

func (a *approver) watch(s *Session) *Subscription {
	return s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			a.mu.Lock()
			a.cards = append(a.cards, e.Permission.Request.Card)
			d := a.d
			a.mu.Unlock()
			e.Permission.Answer(d)
		}
	})
}

func (a *approver) last(t *testing.T) *card.DiffCall {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cards) == 0 {
		t.Fatal("nothing was asked")
	}
	c, ok := a.cards[len(a.cards)-1].(*card.DiffCall)
	if !ok {
		t.Fatalf("the undo was asked as %T, want a diff card", a.cards[len(a.cards)-1])
	}
	return c
}

func diffPaths(c *card.DiffCall) []string {
	var ps []string
	for _, d := range c.Diffs {
		ps = append(ps, d.Path)
	}
	return ps
}

func gitRepo(t *testing.T, root string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
}

// The agent edits, creates and deletes files with its file tools and with real
// shell commands (sed -i, a generated file, rm -rf of a directory); the user
// then edits one of them. /undo shows the diff, puts everything else back, and
// keeps the user's file; /undo again undoes the undo.
func TestUndoKeepsWhatTheUserChanged(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, ".gitignore", "build/\n")
	put(t, root, "a.txt", "colour\n")
	put(t, root, "keep.txt", "v1\n")
	put(t, root, "old.txt", "gone soon\n")
	put(t, root, "lib/x.txt", "x\n")
	put(t, root, "lib/y/z.txt", "z\n")
	gitRepo(t, root)
	orig := files(t, root)
	p := scripted(t, `{"turns": [
		{"tool_calls": [
			{"id": "w1", "name": "write", "args": {"path": "new.txt", "content": "brand new\n"}},
			{"id": "r1", "name": "read", "args": {"path": "a.txt"}}]},
		{"tool_calls": [
			{"id": "e1", "name": "edit", "args": {"path": "a.txt", "old_string": "colour", "new_string": "color"}},
			{"id": "b1", "name": "bash", "args": {"command": "sed -i s/v1/v2/ keep.txt && rm old.txt && rm -rf lib && echo generated > gen.out && mkdir -p build && echo obj > build/o.o"}}]},
		{"text": "Done."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ask := &approver{d: agent.AllowOnce}
	sub := ask.watch(s)
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "americanise and tidy"); err != nil {
		t.Fatal(err)
	}
	agentLeft := files(t, root)
	if agentLeft["a.txt"] != "color\n" || agentLeft["keep.txt"] != "v2\n" || agentLeft["gen.out"] != "generated\n" || agentLeft["lib/x.txt"] != "" {
		t.Fatalf("the agent's turn did not do what it should: %q", agentLeft)
	}
	put(t, root, "keep.txt", "the user's\n")

	r, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	asked := ask.last(t)
	if got, want := diffPaths(asked), []string{"a.txt", "gen.out", "lib/x.txt", "lib/y/z.txt", "new.txt", "old.txt"}; !slices.Equal(got, want) {
		t.Errorf("the diff asked about covers %q, want %q", got, want)
	}
	if !strings.Contains(asked.Title, "kept keep.txt") {
		t.Errorf("the approval's title %q does not say keep.txt is kept", asked.Title)
	}
	if !strings.Contains(r.Text, "keep.txt") {
		t.Errorf("the reply %q does not name the kept file", r.Text)
	}
	want := maps(orig, map[string]string{"keep.txt": "the user's\n", "build/o.o": "obj\n"})
	if got := files(t, root); !equal(got, want) {
		t.Errorf("after /undo the workspace is\n%q\nwant\n%q", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Error("the created file is still there")
	}

	// The undo is itself a change: /undo reverts it (the user's file stays).
	if _, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both}); err != nil {
		t.Fatal(err)
	}
	want = maps(agentLeft, map[string]string{"keep.txt": "the user's\n"})
	if got := files(t, root); !equal(got, want) {
		t.Errorf("after undoing the undo the workspace is\n%q\nwant\n%q", got, want)
	}

	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var restores []session.Restore
	for _, r := range recs {
		if r.Type == session.TypeRestore {
			restores = append(restores, *r.Restore)
		}
	}
	if len(restores) != 2 || !slices.Equal(restores[0].Kept, []string{"keep.txt"}) || restores[1].To != 2 || restores[0].After == "" {
		t.Errorf("restore records: %+v", restores)
	}
}

// A rejected undo writes nothing and logs nothing.
func TestUndoRejectedChangesNothing(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo two > a.txt"}}]},
		{"text": "Done."}]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ask := &approver{d: agent.Reject}
	sub := ask.watch(s)
	defer sub.Close()
	if _, err := s.Prompt(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, root)["a.txt"]; got != "two\n" || !strings.Contains(r.Text, "cancelled") {
		t.Errorf("a.txt = %q, reply %q", got, r.Text)
	}
	if ps, err := s.Points(t.Context()); err != nil || len(ps) != 1 {
		t.Errorf("points = %+v, %v: the rejected undo must not be a change", ps, err)
	}
}

// A session reloaded in another process still rewinds: the checkpoints are
// records, the snapshots outside the workspace.
func TestRewindAfterReload(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "a0\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo a1 > a.txt; echo b1 > b.txt"}}]},
		{"text": "One."},
		{"tool_calls": [{"id": "b2", "name": "bash", "args": {"command": "echo a2 > a.txt; rm b.txt; mkdir c; echo c2 > c/c.txt"}}]},
		{"text": "Two."}]}`)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, err := s.Prompt(t.Context(), text); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	o := options(t, root, dir, scripted(t, `{"turns": [{"text": "unused"}]}`))
	o.Ask = true
	r, err := Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(r)
	defer sub.Close()
	list, err := r.Submit(t.Context(), Input{Text: "/rewind", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Points) != 2 || list.Points[0].Text != "first" || list.Points[1].Text != "second" {
		t.Fatalf("points = %+v", list.Points)
	}
	if got := FilesText(list.Points[1].Files); got != "a.txt +1 −1, b.txt +0 −1, c/c.txt +1 −0" {
		t.Errorf("the second prompt's files: %s", got)
	}
	if !strings.Contains(list.Text, "  1. first — a.txt +1 −1, b.txt +1 −0") {
		t.Errorf("the list:\n%s", list.Text)
	}
	if _, err := r.Submit(t.Context(), Input{Text: "/rewind 1", Where: Both}); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "a0\n"}) {
		t.Errorf("after /rewind 1 the workspace is %q", got)
	}

	// The conversation forks before the second prompt: a new log with the
	// first prompt only; this one goes on as it was, and the files stay.
	fk, err := r.Submit(t.Context(), Input{Text: "/rewind 2 conversation", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	if fk.Fork == "" || !strings.Contains(fk.Text, fk.Fork) {
		t.Fatalf("the fork's reply: %+v", fk)
	}
	recs, err := session.ReadFile(filepath.Join(dir, fk.Fork+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, rec := range recs {
		if rec.Type == session.TypeUser {
			prompts = append(prompts, rec.Text)
		}
	}
	if !slices.Equal(prompts, []string{"first"}) || recs[0].SessionID != fk.Fork || recs[len(recs)-1].Type != session.TypeCheckpoint {
		t.Errorf("the fork holds the prompts %q, header %+v, last %+v", prompts, recs[0], recs[len(recs)-1])
	}
	if got := files(t, root); !equal(got, map[string]string{"a.txt": "a0\n"}) {
		t.Errorf("rewinding the conversation changed the files: %q", got)
	}
	// The fork is a session of its own that rewinds too.
	f, err := Load(o, filepath.Join(dir, fk.Fork+".jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if ps, err := f.Points(t.Context()); err != nil || len(ps) != 1 || ps[0].Text != "first" {
		t.Errorf("the fork's points: %+v, %v", ps, err)
	}
}

func maps(base, over map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A secret the snapshots leave out is said once, not at every snapshot, and
// is not in them.
func TestCheckpointsTellSecretsOnce(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "a\n")
	put(t, root, ".env", "KEY=1\n")
	p := scripted(t, `{"turns": [{"text": "one"}, {"text": "two"}]}`)
	o := options(t, root, dir, p)
	var mu sync.Mutex
	var warned []string
	o.Warn = func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		if _, err := s.Prompt(t.Context(), text); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil { // the snapshots are taken in the background
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var told int
	for _, w := range warned {
		if strings.Contains(w, "Checkpoints leave out .env") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times about .env, want once: %q", told, warned)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var trees int
	for _, r := range recs {
		// A before still being taken as its prompt began names no tree.
		if r.Type != session.TypeCheckpoint || r.Checkpoint.Tree == "" {
			continue
		}
		trees++
		if !slices.Contains(r.Checkpoint.Skipped, ".env") {
			t.Errorf("checkpoint %+v does not log .env as left out", r.Checkpoint)
		}
	}
	if trees < 2 {
		t.Errorf("%d checkpoints name a snapshot, want both prompts' afters at least", trees)
	}
}

// One session's command plants a FIFO where every snapshot of the workspace
// reads (.git/info/exclude hung them, and with them every session there):
// another session's prompt still runs, its checkpoints taken.
func TestPlantedFIFOStallsNoSession(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "a\n")
	gitRepo(t, root)
	a, err := Create(options(t, root, dir, scripted(t, `{"turns": [
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "rm -f .git/info/exclude && mkfifo .git/info/exclude"}}]},
		{"text": "planted"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	b, err := Create(options(t, root, dir, scripted(t, `{"turns": [
		{"tool_calls": [{"id": "b1", "name": "bash", "args": {"command": "echo b > a.txt"}}]},
		{"text": "done"}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if _, err := a.Prompt(t.Context(), "plant"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang fails the test
	defer cancel()
	if _, err := b.Prompt(ctx, "edit"); err != nil {
		t.Fatal(err)
	}
	settled(t, b)
	recs, err := session.ReadFile(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	var trees int
	pending := false
	for _, r := range recs {
		if r.Type != session.TypeCheckpoint {
			continue
		}
		c := r.Checkpoint
		switch {
		case c.Phase == session.PhaseBefore && c.Tree == "" && c.Note == pendingNote:
			pending = true // the after names it
		case c.Tree == "" || pending && c.Before == "":
			t.Errorf("checkpoint without a snapshot: %+v", c)
		}
		trees++
	}
	if trees != 2 {
		t.Errorf("%d checkpoints, want 2", trees)
	}
}

// What a command body's !`cmd` changes belongs to its prompt: /undo puts it
// back with what the model then did.
func TestUndoCoversTheBodysCommands(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\n")
	gitRepo(t, root)
	cmds := filepath.Join(root, ".claude", "commands")
	put(t, root, ".claude/commands/prep.md", "Prepared: !`echo made > made.txt && echo two >> a.txt && echo ok`\nNow finish.\n")
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "w1", "name": "write", "args": {"path": "model.txt", "content": "by the model\n"}}]},
		{"text": "Done."}]}`)
	o := options(t, root, dir, p)
	o.Mode, o.Ask = agent.ModeBypass, true
	o.CommandDirs = []command.Dir{{Path: cmds, Root: root, Trusted: true}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sub := (&approver{d: agent.AllowOnce}).watch(s)
	defer sub.Close()
	if _, err := s.Submit(t.Context(), Input{Text: "/prep", Where: Both}); err != nil {
		t.Fatal(err)
	}
	if got := files(t, root); got["made.txt"] != "made\n" || got["a.txt"] != "one\ntwo\n" || got["model.txt"] != "by the model\n" {
		t.Fatalf("the command's turn left %q", got)
	}
	a, err := s.Submit(t.Context(), Input{Text: "/undo", Where: Both})
	if err != nil {
		t.Fatal(err)
	}
	got := files(t, root)
	if t.Failed() || got["a.txt"] != "one\n" {
		t.Logf("/undo answered %q", a.Text)
	}
	for _, f := range []string{"made.txt", "model.txt"} {
		if _, ok := got[f]; ok {
			t.Errorf("/undo left %s", f)
		}
	}
	if got["a.txt"] != "one\n" {
		t.Errorf("/undo left a.txt as %q", got["a.txt"])
	}
}
