package chat

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replayScript is a turn that reads, runs a command whose output streams for
// a while (the pane is resized in the middle of it), edits after an approval,
// and answers in Markdown.
const replayScript = `{"turns": [
	{"text": "Reading the file first.", "tool_calls": [{"id": "c1", "name": "read", "args": {"path": "a.txt"}}]},
	{"text": "Counting slowly.", "tool_calls": [{"id": "c2", "name": "bash", "args": {"command": "for i in $(seq 1 60); do echo line $i; sleep 0.03; done"}}]},
	{"text": "Editing.", "tool_calls": [{"id": "c3", "name": "edit", "args": {"path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
	{"text": "Done editing. A list:\n\n- the first item of the list\n- the second item of the list\n\nThat is all for now."}
]}`

// TestScrollbackIsTheReplayInTmux runs the same scripted session in tmux at
// 120×40 and 80×24, several times, narrowing the pane while a command's
// output streams and widening it back after an approval, and compares the
// pane's whole history (capture-pane -S -) with `dsh replay` of the session:
// every record once, in order, and nothing else — no frozen input or status
// line, no box, no lost message. The text is compared word by word: the
// terminal and the replay wrap at different widths. DSH_TMUX_RUNS sets the
// runs per size (default 2).
func TestScrollbackIsTheReplayInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	runs := 2
	if n, err := strconv.Atoi(os.Getenv("DSH_TMUX_RUNS")); err == nil && n > 0 {
		runs = n
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	script := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(script, []byte(replayScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		for run := range runs {
			t.Run(fmt.Sprintf("%dx%d-%d", size[0], size[1], run), func(t *testing.T) {
				replayRun(t, bin, script, size[0], size[1])
			})
		}
	}
}

func replayRun(t *testing.T, bin, script string, w, h int) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color"}
	socket := fmt.Sprintf("dsh-replay-%d-%s", os.Getpid(), filepath.Base(tmp))
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	history := func() string { return tmux("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "chat") }
	waitFor := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := tmux("capture-pane", "-p", "-t", "chat")
			if m := re.FindStringSubmatch(s); m != nil {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s (%s); the screen:\n%s", what, re, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	answer := func() {
		time.Sleep(2 * permGrace) // a deliberate answer: a key at once is typing ahead
		tmux("send-keys", "-t", "chat", "y")
	}
	cmd := fmt.Sprintf("cd %s && env %s %s --color never --provider script --script %s; echo \"dsh exited $?\"; sleep 600",
		ws, strings.Join(env, " "), bin, script)
	// A tmux server starting while others start and stop on the machine now
	// and then exits at once ("server exited unexpectedly"): that is tmux's,
	// not the chat's, so a start is tried again.
	for attempt := 1; ; attempt++ {
		out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", "chat", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmd).CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("tmux new-session: %v\n%s", err, out)
		}
		_ = exec.Command("tmux", "-L", socket, "kill-server").Run()
	}
	waitFor("the input", regexp.MustCompile(`Ask dsh`))
	tmux("send-keys", "-t", "chat", "-l", "count and edit")
	tmux("send-keys", "-t", "chat", "Enter")
	waitFor("the command's approval", regexp.MustCompile(`Allow bash\?`))
	answer()
	waitFor("the command's output", regexp.MustCompile(`line 1\d\b`))
	tmux("resize-window", "-t", "chat", "-x", strconv.Itoa(w-20), "-y", strconv.Itoa(h-6))
	waitFor("the edit's approval", regexp.MustCompile(`Allow edit\?`))
	answer()
	waitFor("the turn's end", regexp.MustCompile(`That is all for now\.[\s\S]*· done[\s\S]*idle`))
	tmux("resize-window", "-t", "chat", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h))
	tmux("send-keys", "-t", "chat", "-l", "/exit")
	tmux("send-keys", "-t", "chat", "Enter")
	m := waitFor("dsh to exit", regexp.MustCompile(`session (\S+) — go on with[\s\S]*dsh exited 0`))

	rp := exec.Command(bin, "replay", "--color", "never", m[1])
	rp.Dir, rp.Env = ws, append(os.Environ(), env...)
	want, err := rp.Output()
	if err != nil {
		t.Fatalf("dsh replay: %v", err)
	}
	all := history()
	start := strings.Index(all, "› count and edit")
	end := strings.LastIndex(all, "session "+m[1]+" — go on") // /exit is the chat's own: not logged, not echoed
	if start < 0 || end < start {
		t.Fatalf("the history has no prompt or no exit hint:\n%s", all)
	}
	got := strings.Fields(all[start:end])
	wantWords := strings.Fields(string(want))
	if i := firstDiff(got, wantWords); i >= 0 {
		t.Errorf("the scrollback differs from the replay at word %d: %q, want %q\n--- scrollback\n%s\n--- replay\n%s",
			i, around(got, i), around(wantWords, i), all[start:end], want)
	}
}

// firstDiff is the index of the first word where a and b differ, -1 if none.
func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func around(words []string, i int) string {
	return strings.Join(words[max(i-5, 0):min(i+5, len(words))], " ")
}
