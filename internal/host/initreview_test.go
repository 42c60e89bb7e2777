package host

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/shellrule"
)

// sentText is everything a model request held, one line per part.
func sentText(req provider.Request) string {
	var sent []string
	for _, m := range req.Messages {
		for _, part := range m.Parts {
			sent = append(sent, string(m.Role)+" "+string(part.Type)+" "+part.Text+part.Name)
			for _, c := range part.Content {
				sent = append(sent, "  "+c.Text)
			}
		}
	}
	return strings.Join(sent, "\n")
}

// /init hands the model Claude Code's survey-and-write prompt as a turn: the
// model's write of AGENTS.md is a diff card asked about like any write, and
// the user record keeps "/init" with the prompt beside it.
func TestInitWritesAgentsMD(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"main.go": "package main\n"})
	p := scripted(t, `{"turns": [
		{"match": "AGENTS.md", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "AGENTS.md", "content": "# AGENTS.md\n\nRun go test ./...\n"}}]},
		{"text": "Wrote AGENTS.md."}]}`)
	o := options(t, root, t.TempDir(), p)
	o.Mode, o.Ask = ModeDefault, true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Answers("/init", Terminal) || s.Answers("/review", Editor) {
		t.Error("/init and /review said to answer at once: they run a turn")
	}
	var asked []card.Call
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			asked = append(asked, e.Permission.Request.Card)
			e.Permission.Answer(AllowOnce)
		}
	})
	a, err := s.Submit(t.Context(), Input{Text: "/init", Where: Editor})
	if err != nil || !a.Turn || a.Stop != StopEndTurn {
		t.Fatalf("Submit = %+v, %v", a, err)
	}
	sub.Flush(5 * time.Second)
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once (the write)", len(asked))
	}
	if d, ok := asked[0].(*card.DiffCall); !ok || len(d.Diffs) != 1 || !strings.HasSuffix(d.Diffs[0].Path, "AGENTS.md") {
		t.Errorf("the write was asked about as %#v, want a diff card of AGENTS.md", asked[0])
	}
	if b, err := os.ReadFile(filepath.Join(root, "AGENTS.md")); err != nil || !strings.Contains(string(b), "go test") {
		t.Errorf("AGENTS.md: %q, %v", b, err)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == session.TypeCommand {
			t.Errorf("/init logged as a command record: %+v", r)
		}
		if r.Type == session.TypeUser && (r.Text != "/init" || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "write an AGENTS.md")) {
			t.Errorf("user record %+v", r)
		}
	}
}

// /review runs the diff as the user's own command (a bash card, no
// question), then asks the model to review it: the model reads the diff
// before the prompt. A branch's review is its diff since it left HEAD. The
// commands are known safe, so the bash tool's guard holds: a diff program
// the repository's own config names does not run.
func TestReviewAttachesTheDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "one\n"})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	git("checkout", "-q", "-b", "topic")
	writeFiles(t, root, map[string]string{"a.txt": "one\nbranch-line\n"})
	git("commit", "-qam", "two")
	git("checkout", "-q", "main")
	writeFiles(t, root, map[string]string{"a.txt": "one\nuncommitted-line\n",
		"evil.sh": "#!/bin/sh\ntouch \"" + filepath.Join(root, "pwned") + "\"\n"})
	if err := os.Chmod(filepath.Join(root, "evil.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	git("config", "diff.external", filepath.Join(root, "evil.sh"))
	p := scripted(t, `{"turns": [{"text": "Looks fine."}, {"text": "Also fine."}]}`)
	o := options(t, root, t.TempDir(), p)
	o.Mode, o.Ask = ModeDefault, true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	asked := 0
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			asked++
			e.Permission.Answer(Reject)
		}
	})
	for _, tc := range []struct{ typed, diff, prompt string }{
		{"/review", "+uncommitted-line", "uncommitted changes of the working tree"},
		{"/review topic", "+branch-line", "the branch topic"},
	} {
		if a, err := s.Submit(t.Context(), Input{Text: tc.typed, Where: Terminal}); err != nil || !a.Turn || a.Stop != StopEndTurn {
			t.Fatalf("%s: Submit = %+v, %v", tc.typed, a, err)
		}
		sent := sentText(p.last(t))
		at := func(s string) int { return strings.LastIndex(sent, s) }
		if at(tc.diff) < 0 || at(tc.prompt) < 0 || at(tc.diff) > at(tc.prompt) {
			t.Errorf("%s: the model was sent (the diff %q before the prompt %q):\n%s", tc.typed, tc.diff, tc.prompt, sent)
		}
	}
	sub.Flush(5 * time.Second)
	if asked != 0 {
		t.Errorf("the review's git command was asked about %d times", asked)
	}
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Error("the repository's diff.external ran")
	}
	for _, args := range []string{"", "topic", "feat/x-1.2"} {
		cmd, _, err := reviewCommand(args)
		if v := shellrule.Classify(cmd, nil); err != nil || !v.Safe || !v.RunsGit {
			t.Errorf("/review %s runs %q, not known safe (%v): the guard would not hold", args, cmd, err)
		}
	}
	for _, bad := range []string{"/review a;rm -rf x", "/review --output=x", "/review a..b", "/review a b"} {
		a, err := s.Submit(t.Context(), Input{Text: bad, Where: Terminal})
		if err != nil || a.Turn || !strings.HasPrefix(a.Text, "Cannot review") {
			t.Errorf("%s: %+v, %v", bad, a, err)
		}
	}
}

// A custom review.md (Claude Code users often have one) replaces the
// built-in /review: the table lists one /review, the custom one, and it runs.
func TestCustomReviewReplacesTheBuiltin(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{".claude/commands/review.md": "---\ndescription: mine\n---\nMy review of $ARGUMENTS."})
	p := scripted(t, `{"turns": [{"text": "ok"}]}`)
	o := options(t, root, t.TempDir(), p)
	o.CommandDirs = []command.Dir{{Path: filepath.Join(root, ".claude", "commands"), Root: root}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var reviews []string
	for _, c := range s.Commands() {
		if c.Name == "review" {
			reviews = append(reviews, c.Description)
		}
	}
	if len(reviews) != 1 || reviews[0] != "mine (project)" {
		t.Errorf("the table's /review: %q", reviews)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/review x.go", Where: Terminal}); err != nil {
		t.Fatal(err)
	}
	if sent := sentText(p.last(t)); !strings.Contains(sent, "My review of x.go.") || strings.Contains(sent, "git") {
		t.Errorf("sent:\n%s", sent)
	}
}
