package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxBinary skips the test without tmux (fails it under DSH_REQUIRE_TMUX)
// and builds dsh into a new temporary directory: it returns both.
func tmuxBinary(t *testing.T) (tmp, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	tmp = t.TempDir()
	bin = filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return tmp, bin
}

// tmuxPane is one pane of a private tmux server running the real binary.
type tmuxPane struct {
	t      *testing.T
	socket string
	target string
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) screen() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", p.target)
}

// typeText types text literally, then the keys (tmux key names: Enter, C-c).
func (p *tmuxPane) typeText(text string, keys ...string) {
	p.t.Helper()
	if text != "" {
		p.tmux("send-keys", "-t", p.target, "-l", text)
	}
	for _, k := range keys {
		p.tmux("send-keys", "-t", p.target, k)
	}
}

// waitFor waits until the screen matches re and returns the match's groups.
func (p *tmuxPane) waitFor(what string, re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if m := re.FindStringSubmatch(s); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s (%s); the screen:\n%s", what, re, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestChatInTmux drives `dsh` in a real terminal: a prompt is typed, a command
// approved with one key, a running command cancelled with Ctrl-C (its processes
// gone), /exit; then `dsh -c` reopens the session and the model is sent the
// earlier turns.
func TestChatInTmux(t *testing.T) {
	tmp, bin := tmuxBinary(t)
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(tmp, "first.json")
	second := filepath.Join(tmp, "second.json")
	writeFile(t, first, `{"turns": [
		{"text": "Running it.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch approved && echo approved-and-ran"}}]},
		{"text": "The first turn is done."},
		{"tool_calls": [{"id": "c2", "name": "bash", "args": {"command": "echo pgid=$$; sleep 300"}}]},
		{"text": "never reached"}
	]}`)
	writeFile(t, second, `{"turns": [
		{"echo_request": true},
		{"tool_calls": [{"id": "c3", "name": "bash", "args": {"command": "echo pgid=$$ again; sleep 300"}}]}
	]}`)

	p := &tmuxPane{t: t, socket: fmt.Sprintf("dsh-test-%d", os.Getpid()), target: "chat"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color"}
	run := func(args string) {
		cmd := fmt.Sprintf("cd %s && env %s %s %s; echo \"dsh exited $?\"; sleep 600", ws, strings.Join(env, " "), bin, args)
		p.tmux("new-session", "-d", "-s", p.target, "-x", "100", "-y", "50", cmd)
	}

	run("--color never --provider script --script " + first)
	p.waitFor("the input", regexp.MustCompile(`Ask dsh`))
	p.typeText("hello from the first prompt", "Enter")
	p.waitFor("the permission prompt", regexp.MustCompile(`Allow bash\?[\s\S]*\[y\] yes, once`))
	time.Sleep(time.Second) // a deliberate answer: keys typed at once are typing ahead
	p.typeText("y")
	p.waitFor("the approved command's result", regexp.MustCompile(`approved-and-ran\s+exit 0[\s\S]*The first turn is done\.`))

	p.typeText("now a slow one", "Enter")
	p.waitFor("the second permission prompt", regexp.MustCompile(`now a slow one[\s\S]*Allow bash\?`))
	time.Sleep(time.Second) // a deliberate answer: keys typed at once are typing ahead
	p.typeText("y")
	m := p.waitFor("the running command", regexp.MustCompile(`pgid=(\d+)`))
	pgid, _ := strconv.Atoi(m[1])
	if pgid <= 1 || syscall.Kill(-pgid, 0) != nil {
		t.Fatalf("the command's process group %d should be running", pgid)
	}
	p.typeText("", "C-c")
	p.waitFor("the cancelled turn", regexp.MustCompile(`· cancelled`))
	waitGone(t, pgid)
	if s := p.screen(); strings.Contains(s, "dsh exited") {
		t.Fatalf("one Ctrl-C must not exit:\n%s", s)
	}
	time.Sleep(2100 * time.Millisecond) // so /exit's keys are not a second Ctrl-C's
	p.typeText("/exit", "Enter")
	m = p.waitFor("dsh to exit", regexp.MustCompile(`session (\S+) — go on with: dsh -c[\s\S]*dsh exited 0`))
	id := m[1]
	// The second session starts before the first is killed: a server left
	// with no session exits, and one started at that moment can fail.
	old := p.target
	p.target = "chat2"
	run("-c --color never --provider script --script " + second)
	p.tmux("kill-session", "-t", old)
	p.waitFor("the earlier conversation", regexp.MustCompile(`› hello from the first prompt[\s\S]*approved-and-ran[\s\S]*resumed session `+regexp.QuoteMeta(id)))
	// The history is printed from the top: no screenful of blank lines
	// before it (the renderer's first frame is the whole screen).
	if h := p.tmux("capture-pane", "-p", "-S", "-", "-t", p.target); strings.Count(h[:strings.Index(h, "› hello from the first prompt")], "\n") > 1 {
		t.Errorf("blank lines before the resumed history:\n%s", h)
	}
	p.typeText("what did I say?", "Enter")
	p.waitFor("the model to be sent the earlier turns", regexp.MustCompile(
		`user: hello from the first prompt\s+assistant: Running it\.[\s\S]*assistant: The first turn is done\.\s+user: now a slow one[\s\S]*user: what did I say\?`))

	// Two Ctrl-C while a command runs exit at once and leave no process.
	p.typeText("one more", "Enter")
	p.waitFor("the third permission prompt", regexp.MustCompile(`one more[\s\S]*Allow bash\?`))
	time.Sleep(time.Second) // a deliberate answer: keys typed at once are typing ahead
	p.typeText("y")
	m = p.waitFor("the second running command", regexp.MustCompile(`pgid=(\d+) again`))
	pgid, _ = strconv.Atoi(m[1])
	p.typeText("", "C-c", "C-c")
	p.waitFor("dsh to exit on a double Ctrl-C", regexp.MustCompile(`dsh exited 130`))
	waitGone(t, pgid)

	logs, err := filepath.Glob(filepath.Join(tmp, "state", "dsh", "sessions", "*.jsonl"))
	if err != nil || len(logs) != 1 || !strings.Contains(logs[0], id) {
		t.Errorf("the conversation should go on in one log, %s; found %v", id, logs)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitGone waits until no process of the group is left.
func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d is still alive after the turn was cancelled", pgid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
