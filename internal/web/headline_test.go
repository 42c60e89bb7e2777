package web

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestBrowserApprovesChatInTmux is the headline: a chat in a real
// terminal (tmux) waits on a write's permission; `dsh web`, another process,
// lists the session as running; the browser joins it and allows the write;
// the chat goes on with the turn, the file is written, and the log says the
// answer came from the web.
func TestBrowserApprovesChatInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("DSH_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is required (DSH_REQUIRE_TMUX is set) but not installed")
		}
		t.Skip("tmux is not installed")
	}
	ctx, consoleProblems := browser(t) // skips without chromium
	shots := artifacts(t)
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
		{"text": "Writing the note.", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "note.txt", "content": "approved in the browser\n"}}]},
		{"text": "The note is written."}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"),
		"HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color", "PATH=" + os.Getenv("PATH")}

	// The chat, in tmux.
	sock := fmt.Sprintf("dsh-web-%d", os.Getpid())
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", sock, "kill-server").Run() })
	screenWait := func(what string, re *regexp.Regexp) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; {
			s := tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "chat")
			if re.MatchString(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s (%s) in the chat; the screen:\n%s", what, re, s)
			}
			time.Sleep(100 * time.Millisecond) // the terminal has no event to wait on
		}
	}
	tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "50",
		fmt.Sprintf("cd %s && env %s %s --color never --provider script --script %s; sleep 600", ws, strings.Join(env, " "), bin, script))
	screenWait("the input", regexp.MustCompile(`Ask dsh`))
	tmux("send-keys", "-t", "chat", "-l", "write the note")
	tmux("send-keys", "-t", "chat", "Enter")
	screenWait("the chat's permission prompt", regexp.MustCompile(`Allow write\?`))

	// dsh web, another process.
	web := exec.CommandContext(t.Context(), bin, "web", "--dir", ws)
	web.Dir, web.Env = ws, env
	stdout, err := web.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	web.Stderr = &stderr
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = web.Process.Signal(os.Interrupt)
		_ = web.Wait()
	})
	sc := bufio.NewScanner(stdout)
	urlRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=\S+`)
	var u string
	for u == "" && sc.Scan() {
		u = urlRE.FindString(sc.Text())
	}
	if u == "" {
		t.Fatalf("dsh web printed no URL: %s", stderr.String())
	}

	do(t, ctx, "open the list", chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`tr[data-session]`)))
	if s := eval[string](t, ctx, `document.querySelector('tr[data-session] .badge.state').textContent`); s != "running" {
		t.Errorf("the chat's session is listed as %q", s)
	}
	do(t, ctx, "open the session", chromedp.Click(chromedp.CSS(`tr[data-session] td.prompt a`)))
	waitNavigated(t, ctx, "the join button", `document.querySelector('[data-post="join"]') !== null`)
	do(t, ctx, "join", chromedp.Click(chromedp.CSS(`[data-post="join"]`)))
	waitNavigated(t, ctx, "the composer of the joined session", `document.getElementById('composer') !== null`)
	waitFor(t, ctx, "the chat's pending write, in the browser", `document.querySelector('#asks .ask [data-card="diff-call"]')?.textContent.includes('approved in the browser')`)
	screenshot(t, ctx, shots, "headline-ask.png", false)
	clicked := time.Now()
	do(t, ctx, "allow once", chromedp.Click(chromedp.CSS(`#asks [data-decision="allow_once"]`)))
	waitFor(t, ctx, "the turn's end on the page", `document.querySelector('[data-item="turn-end"][data-stop="end_turn"]') !== null`)
	onPage := time.Since(clicked)
	screenWait("the chat going on", regexp.MustCompile(`The note is written\.`))
	msg := fmt.Sprintf("web: a chat's permission allowed from the browser; the turn's end on the page %.0fms after the click, in the chat's terminal by %.0fms%s",
		float64(onPage.Microseconds())/1000, float64(time.Since(clicked).Microseconds())/1000, raceNote)
	t.Log(msg)
	fmt.Println(msg)
	screenshot(t, ctx, shots, "headline-done.png", true)
	if b, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(b) != "approved in the browser\n" {
		t.Errorf("note.txt: %q %v", b, err)
	}
	infos, err := session.List(filepath.Join(tmp, "state", "dsh", "sessions"))
	if err != nil || len(infos) != 1 {
		t.Fatalf("sessions %v %v", infos, err)
	}
	recs, err := session.ReadFile(infos[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	from := ""
	for _, r := range recs {
		if r.Type == session.TypeDecision {
			from = r.From
		}
	}
	if from != "web" {
		t.Errorf("the decision was logged from %q, want web", from)
	}
	if p := consoleProblems(); len(p) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(p, "\n"))
	}
}
