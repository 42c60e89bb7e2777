package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/session"
)

// commitCommand is a Claude Code command file as its users write them: an
// unquoted description with ": ", a [file] [message] hint, allowed-tools for
// the git commands it has the model run, a !`cmd` whose output the prompt
// holds, and $1/$2.
const commitCommand = `---
description: Commit a file: stage it and record it
argument-hint: [file] [message]
allowed-tools: Bash(git add:*), Bash(git commit:*)
---
The working tree now:
!` + "`git status --short`" + `

Stage $1 and commit it with the message "$2".
`

// TestClaudeCodeCommand: a Claude Code command with $1, !`git status` and
// allowed-tools: Bash(git add:*), Bash(git commit:*) works unchanged on the
// real binary through dsh run and dsh acp: git status runs as a bash call
// (logged and shown as a terminal card) before the prompt, whose expansion
// holds its output and the arguments; the model's git add && git commit runs
// unasked in the default mode, for that turn only. In a project the user has
// not trusted, the same file pre-approves nothing: the user is asked (dsh
// run's stdin is closed, so refused) and nothing is committed.
func TestClaudeCodeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	script := filepath.Join(tmp, "script.json")
	call, _ := json.Marshal(map[string]string{"command": `git add a.txt && git commit -qm "first commit"`})
	writeFile(t, script, `{"turns": [{"tool_calls": [{"name": "bash", "args": `+string(call)+`}]}, {"text": "Committed."}]}`)
	repo := func(name string, trusted bool) (ws string, env []string) {
		ws = filepath.Join(tmp, name)
		for _, d := range []string{filepath.Join(ws, ".claude", "commands"), filepath.Join(tmp, name+"-xdg", "dsh")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		writeFile(t, filepath.Join(ws, ".claude", "commands", "commit.md"), commitCommand)
		writeFile(t, filepath.Join(ws, "a.txt"), "a\n")
		if trusted {
			writeFile(t, filepath.Join(tmp, name+"-xdg", "dsh", "config.toml"), "trusted_projects = [\""+ws+"\"]\n")
		}
		env = []string{"HOME=" + filepath.Join(tmp, "home"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, name+"-xdg"),
			"XDG_STATE_HOME=" + filepath.Join(tmp, name+"-state"), "PATH=" + os.Getenv("PATH"), "NO_COLOR=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
		git := exec.Command("git", "init", "-q")
		git.Dir = ws
		if out, err := git.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		return ws, env
	}
	flags := []string{"--provider", "script", "--script", script}
	input := `/commit a.txt "first commit"`
	run := func(ws string, env []string) (stdout, stderr string) {
		cmd := exec.Command(bin, append(append([]string{"run"}, flags...), input)...)
		cmd.Dir, cmd.Env = ws, env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("dsh run: %v\n%s\n%s", err, o.String(), e.String())
		}
		return o.String(), e.String()
	}

	// dsh run, a trusted project.
	ws, env := repo("run", true)
	stdout, stderr := run(ws, env)
	t.Logf("dsh run printed:\n%s\n%s", stdout, stderr)
	if strings.Contains(stderr, "Allow bash?") {
		t.Errorf("dsh run asked about a call the command's allowed-tools approve:\n%s", stderr)
	}
	if !strings.Contains(stdout, "git status --short") || !strings.Contains(stdout, "?? a.txt") {
		t.Errorf("dsh run does not show git status's terminal card:\n%s", stdout)
	}
	checkCommitted(t, ws, filepath.Join(tmp, "run-state"), true)

	// dsh acp, a trusted project: the editor asks nothing either.
	ws, env = repo("acp", true)
	updates := acpSession(t, bin, ws, env, flags, []string{input})
	checkCommitted(t, ws, filepath.Join(tmp, "acp-state"), true)
	// The editor offers the command with its hint, and shows git status as
	// a command (kind execute) whose output it has, before the model's commit.
	var shown []string
	for _, u := range updates {
		switch {
		case strings.Contains(u, `"name":"commit"`) && strings.Contains(u, `"hint":"[file] [message]"`):
			shown = append(shown, "offered /commit [file] [message]")
		case strings.Contains(u, `"sessionUpdate":"tool_call"`) && strings.Contains(u, `"kind":"execute"`):
			var n struct {
				Params struct {
					Update struct{ Title string } `json:"update"`
				} `json:"params"`
			}
			_ = json.Unmarshal([]byte(u), &n)
			shown = append(shown, "call "+n.Params.Update.Title)
		case strings.Contains(u, `"sessionUpdate":"tool_call_update"`) && strings.Contains(u, `?? a.txt`) && len(shown) > 0 && shown[len(shown)-1] != "output ?? a.txt": // live, then final
			shown = append(shown, "output ?? a.txt")
		}
	}
	t.Logf("dsh acp showed: %q", shown)
	if want := []string{"offered /commit [file] [message]", "call git status --short", "output ?? a.txt", `call git add a.txt && git commit -qm "first commit"`}; !slices.Equal(shown, want) {
		t.Errorf("dsh acp showed %q, want %q", shown, want)
	}

	// dsh run, an untrusted project: asked, refused, nothing committed.
	ws, env = repo("untrusted", false)
	_, stderr = run(ws, env)
	t.Logf("dsh run in an untrusted project printed:\n%s", stderr)
	for _, want := range []string{"allowed-tools ignored: the project is not trusted", "Allow bash?"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("dsh run in an untrusted project does not say %q:\n%s", want, stderr)
		}
	}
	checkCommitted(t, ws, filepath.Join(tmp, "untrusted-state"), false)
}

// checkCommitted checks ws's git history and its one session's log: git
// status ran as a bash call before the prompt, whose expansion holds its
// output and the arguments; the model's commit was made, or not.
func checkCommitted(t *testing.T, ws, state string, committed bool) {
	t.Helper()
	git := exec.Command("git", "log", "--format=%s")
	git.Dir = ws
	out, _ := git.CombinedOutput()
	if got := strings.TrimSpace(string(out)) == "first commit"; got != committed {
		t.Errorf("%s: git log says %q; want committed %v", ws, out, committed)
	}
	paths, err := filepath.Glob(filepath.Join(state, "dsh", "sessions", "*.jsonl"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("want one session in %s, found %v (%v)", state, paths, err)
	}
	recs, err := session.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, r := range recs {
		if r.Type == session.TypeToolCall {
			var a struct{ Command string }
			_ = json.Unmarshal(r.Args, &a)
			seq = append(seq, "call "+r.Name+" "+a.Command)
		}
		if r.Type == session.TypeUser {
			seq = append(seq, "user "+r.Text)
			model := attach.ModelText(r.Text, r.Content)
			if committed && (!strings.Contains(model, "The working tree now:\n?? .claude/\n?? a.txt\n") || !strings.Contains(model, `Stage a.txt and commit it with the message "first commit".`)) {
				t.Errorf("the prompt the model got:\n%s", model)
			}
			t.Logf("%s: the prompt the model got:\n%s", filepath.Base(ws), model)
		}
	}
	want := "call bash git status --short|user /commit a.txt \"first commit\"|call bash git add a.txt && git commit -qm \"first commit\""
	if got := strings.Join(seq, "|"); got != want {
		t.Errorf("logged %s\nwant %s", got, want)
	}
}
