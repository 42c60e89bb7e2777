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

	"github.com/charmbracelet/x/ansi"
)

// TestBoxesInTmux drives the real binary in tmux, at 120×40 and at 80×24,
// through what a user meets in boxes:
//   - a write that changes all 2,000 lines of a file asks in a box; the pane
//     is narrowed and shortened twice while it shows, and the box stays
//     whole (its edges, its rows the width of its edges, its keys);
//   - e reviews the change full-screen: its first row (the hunk's header, line
//     1) and, after G, its last (line 2,000) are on screen, g goes back;
//   - a question's own answer typed at 150 ms a key arrives whole (only the
//     first key waits for the pause that tells typing ahead from answering);
//   - /diff, its picker's first choice (the whole session: here its one
//     prompt), opens the same change full-screen, top and bottom reachable.
func TestBoxesInTmux(t *testing.T) {
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
	var old, rewritten strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		fmt.Fprintf(&rewritten, "LINE %d\n", i)
	}
	script := filepath.Join(tmp, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"tool_calls": [{"name": "read", "args": {"path": "big.txt"}}]},
		{"text": "Rewriting.", "tool_calls": [{"name": "write", "args": {"path": "big.txt", "content": `+strconv.Quote(rewritten.String())+`}}]},
		{"tool_calls": [{"name": "ask_user", "args": {"question": "Which power?", "options": [{"label": "power1"}, {"label": "square"}]}}]},
		{"text": "Thanks."}
	]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			boxesRun(t, bin, script, old.String(), size[0], size[1])
		})
	}
}

func boxesRun(t *testing.T, bin, script, big string, w, h int) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color"}
	socket := fmt.Sprintf("dsh-boxes-%d-%s", os.Getpid(), filepath.Base(tmp))
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	screen := func() string { return tmux("capture-pane", "-p", "-t", "chat") }
	waitFor := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if m := re.FindStringSubmatch(s); m != nil {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s (%s); the screen:\n%s", what, re, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "chat"}, k...)...) }
	pause := func() { time.Sleep(2 * permGrace) } // a deliberate key: one at once is typing ahead
	cmd := fmt.Sprintf("cd %s && env %s %s --color never --provider script --script %s; echo \"dsh exited $?\"; sleep 600",
		ws, strings.Join(env, " "), bin, script)
	tmux("new-session", "-d", "-s", "chat", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmd)
	waitFor("the input", regexp.MustCompile(`Ask dsh`))
	keys("-l", "shout every line")
	keys("Enter")
	waitFor("the write's approval", regexp.MustCompile(`Allow write\?`))

	// The box stays whole however the pane is resized under it.
	for _, sz := range [][2]int{{w - 20, h - 6}, {w - 40, h - 10}, {w, h}} {
		tmux("resize-window", "-t", "chat", "-x", strconv.Itoa(sz[0]), "-y", strconv.Itoa(sz[1]))
		s := waitFor(fmt.Sprintf("the box at %dx%d", sz[0], sz[1]),
			regexp.MustCompile(fmt.Sprintf(`(?m)^╭─ Allow write\? ─+╮\n(│.*│\n)+╰─{%d}╯\n[\s\S]*\[y\] yes, once`, sz[0]-2)))
		for _, row := range strings.Split(strings.TrimSpace(s[0]), "\n") {
			if strings.HasPrefix(row, "│") && ansi.StringWidth(row) != sz[0] {
				t.Errorf("at %dx%d a row of the box is %d wide: %q", sz[0], sz[1], ansi.StringWidth(row), row)
			}
		}
	}

	// e: the whole change full-screen, the first row to the last.
	pause()
	keys("e")
	first := waitFor("the review", regexp.MustCompile(`Allow write\? · rows 1–(\d+) of (\d+)`))
	if s := screen(); !strings.Contains(s, "@@ -1,2000 +1,2000 @@") || !regexp.MustCompile(`(?m)^ +1 +- line 1\s*$`).MatchString(s) {
		t.Errorf("the review's first page is not the top of the change:\n%s", s)
	}
	total, _ := strconv.Atoi(first[2])
	keys("G")
	waitFor("the last page", regexp.MustCompile(fmt.Sprintf(`rows \d+–%d of %d`, total, total)))
	if s := screen(); !regexp.MustCompile(`(?m)^ +2000 \+ LINE 2000\s*$`).MatchString(s) {
		t.Errorf("G does not reach line 2000:\n%s", s)
	}
	t.Logf("%dx%d: the change is %d rows; the review showed rows 1–%s first and reached row %d", w, h, total, first[1], total)
	keys("g")
	waitFor("the first page again", regexp.MustCompile(`rows 1–\d+ of `))
	keys("q")
	waitFor("the box again", regexp.MustCompile(`\[y\] yes, once`))
	keys("y")

	// A question answered in the user's own words, typed at 150 ms a key.
	waitFor("the question", regexp.MustCompile(`Which power\?`))
	pause()
	const answer = "power2 please"
	for _, r := range answer {
		keys("-l", string(r))
		time.Sleep(150 * time.Millisecond)
	}
	waitFor("the answer typed", regexp.MustCompile(`your answer: `+answer))
	keys("Enter")
	waitFor("the turn's end", regexp.MustCompile(`Thanks\.[\s\S]*idle ·`))
	if s := screen(); !regexp.MustCompile(`(?m)^› Ask dsh`).MatchString(s) {
		t.Errorf("keys of the answer were left in the prompt:\n%s", s)
	}

	// /diff: the whole session, top to bottom.
	keys("-l", "/diff")
	keys("Enter")
	waitFor("the changes to choose from", regexp.MustCompile(`the whole session`))
	keys("Enter")
	waitFor("the diff's review", regexp.MustCompile(`changed big\.txt · rows 1–`))
	keys("G")
	waitFor("the diff's last page", regexp.MustCompile(`(?m)^ +2000 \+ LINE 2000\s*$`))
	keys("q")
	keys("-l", "/exit")
	keys("Enter")
	m := waitFor("dsh to exit", regexp.MustCompile(`session (\S+) — go on with[\s\S]*dsh exited 0`))
	rp := exec.Command(bin, "replay", "--color", "never", m[1])
	rp.Dir, rp.Env = ws, append(os.Environ(), env...)
	out, err := rp.Output()
	if err != nil {
		t.Fatalf("dsh replay: %v", err)
	}
	if !regexp.MustCompile(`Your own answer:\s+` + answer + `\n`).Match(out) {
		t.Errorf("the answer did not arrive whole; the replay:\n%s", out)
	}
}
