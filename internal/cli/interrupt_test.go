package cli

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// TestInterruptCancelsTheTurn drives the real binary: Ctrl-C in the middle of a
// command cancels the turn cleanly — the command's process group is gone, the
// call is logged as cancelled, and dsh exits 130.
func TestInterruptCancelsTheTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dsh")
	build := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	scriptFile := filepath.Join(tmp, "s.json")
	if err := os.WriteFile(scriptFile, []byte(`{"turns":[{"tool_calls":[{"id":"c1","name":"bash","args":{"command":"echo pgid=$$; sleep 300"}}]},{"text":"never reached"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(tmp, "state")
	cmd := exec.Command(bin, "run", "--mode", "bypass", "--provider", "script", "--script", scriptFile, "wait")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		// The output line, not the card's title, which shows the command itself.
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "pgid="); ok {
			pgid, _ = strconv.Atoi(v)
			break
		}
	}
	if pgid == 0 {
		_ = cmd.Process.Kill()
		t.Fatal("the command's output never showed its process group")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() { // keep draining so dsh never blocks on a full pipe
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("dsh did not exit after Ctrl-C")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want status 130", err)
	}
	proctest.GroupGone(t, pgid)
	out, err := exec.Command(bin, "replay", "--json", "--session-dir", filepath.Join(state, "dsh", "sessions"), "last").CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	// The command's output so far is kept with the cancel.
	for _, want := range []string{`pgid=`, `Cancelled: the command's process group was terminated.`, `"card":"terminal"`, `"stopReason":"cancelled"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// TestSecondInterruptKillsEverything: a second Ctrl-C exits at once, but only
// after every process group the session started — a foreground command that
// ignores SIGTERM and a background job — is gone.
func TestSecondInterruptKillsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
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
	scriptFile := filepath.Join(tmp, "s.json")
	if err := os.WriteFile(scriptFile, []byte(`{"turns":[
		{"tool_calls":[{"id":"j1","name":"bash","args":{"command":"echo $$ > job.pgid; exec sleep 300","run_in_background":true}}]},
		{"tool_calls":[{"id":"c1","name":"bash","args":{"command":"trap '' TERM; echo pgid=$$; sleep 300; sleep 300"}}]},
		{"text":"never reached"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--mode", "bypass", "--provider", "script", "--script", scriptFile, "wait")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(tmp, "state"), "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "pgid="); ok {
			pgid, _ = strconv.Atoi(v)
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	b, err := os.ReadFile(filepath.Join(ws, "job.pgid"))
	jobPgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pgid == 0 || jobPgid == 0 {
		_ = cmd.Process.Kill()
		t.Fatalf("no process groups to watch: command %d, job %d (%v)", pgid, jobPgid, err)
	}
	for range 2 {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("dsh did not exit after the second Ctrl-C")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit = %v, want status 130", err)
	}
	// Gone by the time dsh has exited, not eventually: check once, at once.
	for name, g := range map[string]int{"command": pgid, "job": jobPgid} {
		if live := proctest.LiveMembers(g); len(live) > 0 {
			t.Errorf("the %s's process group %d still has live processes %v after dsh exited", name, g, live)
		}
	}
}

// The first Ctrl-C says what it does: a turn is cancelled; the web server,
// which runs none, is stopped.
func TestFirstInterruptSaysWhatItDoes(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"web", "dsh: stopping the web server (press Ctrl-C again to exit now)"},
		{"run", "dsh: cancelling (press Ctrl-C again to exit now)"},
	} {
		sigs := make(chan os.Signal, 1)
		var errb lockedBuffer
		cancelled := make(chan struct{})
		go cancelOnInterrupt(IO{Err: &errb, Interrupts: sigs}, func() { close(cancelled) }, interruptNote(tc.cmd))
		sigs <- os.Interrupt
		<-cancelled
		if got := strings.TrimSpace(errb.String()); got != tc.want {
			t.Errorf("dsh %s: %q, want %q", tc.cmd, got, tc.want)
		}
	}
}
