package chat

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScrollbackInTmux drives the real binary in tmux at 60 columns, then 200,
// then 60 again, with a paste in between and an approval box widened under
// it, and reads the pane's whole history (capture-pane -S -): every prompt is
// there once with its › marker, the paste as its placeholder, and of the
// input and the status line only the live ones, at the bottom, of the
// approval box nothing: no frame is left behind in the scrollback. What the
// terminal showed before is kept.
func TestScrollbackInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"text": "Answer one, long enough to wrap at sixty columns: it goes on and on past the edge."},
		{"text": "Answer two, at two hundred columns."},
		{"text": "Answer three, about the paste."},
		{"text": "Answer four, after the paste."},
		{"text": "Answer five, narrow again."},
		{"text": "Running it.", "tool_calls": [{"name": "bash", "args": {"command": "touch approved-file && echo approved-and-ran"}}]},
		{"text": "Answer six, after the approval."}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	socket := fmt.Sprintf("dsh-chat-test-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	history := func() string { return tmux("capture-pane", "-p", "-S", "-", "-t", "chat") }
	waitFor := func(what, s string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(history(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s (%q); the pane's history:\n%s", what, s, history())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	env := "XDG_STATE_HOME=" + filepath.Join(tmp, "state") + " HOME=" + filepath.Join(tmp, "home") + " TERM=xterm-256color"
	tmux("new-session", "-d", "-s", "chat", "-x", "60", "-y", "30",
		fmt.Sprintf("cd %s && for i in 1 2 3 4 5; do echo the shell said line $i; done && env %s %s --color never --provider script --script %s; sleep 600", ws, env, bin, script))
	waitFor("the input", "Ask dsh")
	prompt := func(text, answer string) {
		t.Helper()
		tmux("send-keys", "-t", "chat", "-l", text)
		tmux("send-keys", "-t", "chat", "Enter")
		waitFor("the answer to "+text, answer)
		waitFor("the turn's end", "idle ·")
	}
	resize := func(w int) {
		tmux("resize-window", "-t", "chat", "-x", fmt.Sprint(w), "-y", "30")
		time.Sleep(300 * time.Millisecond) // the chat redraws at the new width
	}

	prompt("the first prompt, at sixty columns, which wraps onto a second line", "Answer one")
	resize(200)
	prompt("the second prompt, wide", "Answer two")
	var paste strings.Builder
	for i := range 20 {
		fmt.Fprintf(&paste, "pasted log line %d\n", i)
	}
	tmux("set-buffer", "-b", "p", paste.String())
	tmux("send-keys", "-t", "chat", "-l", "look at this: ")
	tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "chat") // bracketed, as a terminal pastes
	waitFor("the paste's placeholder", "[paste #1: 20 lines")
	tmux("send-keys", "-t", "chat", "Enter")
	waitFor("the answer to the paste", "Answer three")
	prompt("a prompt after the paste", "Answer four")
	resize(60)
	prompt("the last prompt, narrow again", "Answer five")
	// An approval box drawn at 60 columns, the terminal widened under it.
	tmux("send-keys", "-t", "chat", "-l", "run the command")
	tmux("send-keys", "-t", "chat", "Enter")
	waitFor("the approval", "[y] yes, once")
	resize(200)
	time.Sleep(time.Second) // a deliberate answer: keys typed at once are typing ahead
	tmux("send-keys", "-t", "chat", "y")
	waitFor("the answer after the approval", "Answer six")
	waitFor("the turn's end", "idle ·")
	time.Sleep(300 * time.Millisecond)

	h := history()
	for _, want := range []string{"› the first prompt", "› the second prompt, wide", "› look at this: [paste: 20 lines]",
		"› a prompt after the paste", "› the last prompt, narrow again", "› run the command", "  approved-and-ran"} {
		if n := strings.Count(h, want); n != 1 {
			t.Errorf("%q is in the history %d times, want once", want, n)
		}
	}
	if !strings.Contains(h, "the shell said line 1\nthe shell said line 2\nthe shell said line 3\nthe shell said line 4\nthe shell said line 5\n") {
		t.Errorf("what the terminal showed before dsh started is gone:\n%s", h)
	}
	if strings.Contains(h, "pasted log line 3") {
		t.Error("the paste is echoed in full, not as its placeholder")
	}
	// The live view is the input and the status line at the bottom; any other
	// copy of them is a frame left behind.
	for _, re := range []string{`(?m)^› Ask dsh`, `(?m)^(idle|\S+ working|waiting for you) ·`, `(?m)^Allow bash\?`} {
		want := 1
		if strings.Contains(re, "Allow") {
			want = 0 // answered: the box is gone, the card in the scrollback is the call's
		}
		if n := len(regexp.MustCompile(re).FindAllString(h, -1)); n != want {
			t.Errorf("%s shows %d times in the history, want %d:\n%s", re, n, want, h)
		}
	}
}
