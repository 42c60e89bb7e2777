package bash

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileRepo makes a repository whose own .git/config runs a marker-writing
// program from every place the safe git commands could: fsmonitor, an
// external diff, a textconv and a diff driver's command, a clean filter, and a
// hook. It returns the marker directory.
func hostileRepo(t *testing.T, dir, gitDir string) string {
	t.Helper()
	marks := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write := func(path, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, path), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f.txt", "one\n")
	write(".gitattributes", "*.txt diff=evil filter=evil\n")
	git("add", "-A")
	git("commit", "-qm", "first")
	write("f.txt", "one\ntwo\n")
	mark := func(what string) string { return "touch " + filepath.Join(marks, what) + "; " }
	cfg, err := os.OpenFile(filepath.Join(dir, gitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.WriteString("[core]\n\tfsmonitor = \"" + mark("fsmonitor") + "false\"\n" +
		"[diff]\n\texternal = \"" + mark("external") + "false\"\n" +
		"[diff \"evil\"]\n\ttextconv = \"" + mark("textconv") + "cat\"\n\tcommand = \"" + mark("command") + "false\"\n" +
		"[filter \"evil\"]\n\tclean = \"" + mark("clean") + "cat\"\n")
	if err != nil {
		t.Fatal(err)
	}
	_ = cfg.Close()
	hook := filepath.Join(dir, gitDir, "hooks", "post-index-change")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"+mark("hook")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return marks
}

// TestSafeGitRunsNothingOfTheRepository: git status, diff, log -p, show and
// blame run unasked; in a repository whose config names programs, none of
// them runs (as root or not, sandboxed or not).
func TestSafeGitRunsNothingOfTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFixture(t)
	marks := hostileRepo(t, f.root, ".git")
	for _, cmd := range []string{"git status", "git diff", "git log -p", "git show", "git blame f.txt", "ls && git diff"} {
		if err := os.Chtimes(filepath.Join(f.root, "f.txt"), oldTime, oldTime); err != nil {
			t.Fatal(err)
		}
		if !CommandApproval(cmd, nil).Safe {
			t.Fatalf("%q is not safe", cmd)
		}
		r := f.bash(cmd)
		if got := mustMarks(t, marks); len(got) != 0 {
			t.Errorf("%q ran the repository's %v\n%s", cmd, got, r.TextOf())
		}
	}
}

// TestEmbeddedBareRepository: after a cd into a bare repository inside the
// workspace, a safe git command does not use it (safe.bareRepository=explicit).
func TestEmbeddedBareRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	f := newFixture(t)
	inner := filepath.Join(f.root, "vendor", "x")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	marks := t.TempDir()
	cmd := exec.Command("git", "init", "-q", "--bare", inner)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cfg := "[core]\n\tbare = true\n\tfsmonitor = \"touch " + filepath.Join(marks, "fsmonitor") + "; false\"\n"
	if err := os.WriteFile(filepath.Join(inner, "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.sess.Workspace.SetCwd(inner); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"git status", "git log", "git ls-files"} {
		if r := f.bash(c); !strings.Contains(r.TextOf(), "cannot use bare repository") {
			t.Errorf("%q used the embedded bare repository:\n%s", c, r.TextOf())
		}
	}
	if got := mustMarks(t, marks); len(got) != 0 {
		t.Errorf("the embedded bare repository's config ran: %v", got)
	}
}

var oldTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func mustMarks(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
