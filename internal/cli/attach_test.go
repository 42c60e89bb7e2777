package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/control"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/session"
)

// buildDsh builds the binary into a new temporary directory.
func buildDsh(t *testing.T) (tmp, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp = t.TempDir()
	bin = filepath.Join(tmp, "dsh")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return tmp, bin
}

// TestAnotherClientApprovesARun drives the real binary: dsh run asks about a
// command on its terminal; a second client joins the live session over its
// control socket, sees the pending request and approves it; dsh run's
// prompt ends, the command runs, and the log and the replay say the answer
// came from the web client.
func TestAnotherClientApprovesARun(t *testing.T) {
	tmp, bin := buildDsh(t)
	ws, state := filepath.Join(tmp, "ws"), filepath.Join(tmp, "state")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "script.json")
	writeFile(t, script, `{"turns": [
		{"tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch approved"}}]},
		{"text": "All done."}]}`)
	cmd := exec.Command(bin, "run", "--provider", "script", "--script", script, "make the file")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+filepath.Join(tmp, "home"), "NO_COLOR=1")
	stdin, err := cmd.StdinPipe() // held open: dsh run waits for an answer there
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close() }()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	errText := make(chan string, 1)
	asked := make(chan struct{})
	go func() {
		var b strings.Builder
		r := bufio.NewReader(stderr)
		once := false
		for {
			s, err := r.ReadString(':')
			b.WriteString(s)
			if !once && strings.Contains(b.String(), "Allow bash?") {
				once = true
				close(asked)
			}
			if err != nil {
				errText <- b.String()
				return
			}
		}
	}()
	select {
	case <-asked:
	case err := <-exited:
		t.Fatalf("dsh run ended before asking: %v\n%s", err, <-errText)
	}

	dir := filepath.Join(state, "dsh", "sessions")
	live, err := control.Attachable(dir)
	if err != nil || len(live) != 1 {
		t.Fatalf("attachable sessions %v (%v), want dsh run's", live, err)
	}
	var id string
	for id = range live {
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := control.DialSession(ctx, dir, id, control.DialOptions{From: "web"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	var p *host.Permission
	for e := range c.Events() {
		if e.Kind == host.KindPermission {
			p = e.Permission
			break
		}
	}
	if p == nil || p.Request.CallID != "c1" {
		t.Fatalf("the client was not shown the pending request: %v", c.Err())
	}
	p.Answer(host.AllowOnce)
	<-p.Done() // the session took it: it no longer waits, in any client
	if err := <-exited; err != nil {
		t.Fatalf("dsh run: %v\n%s", err, <-errText)
	}
	if _, err := os.Stat(filepath.Join(ws, "approved")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if !strings.Contains(out.String(), "All done.") {
		t.Errorf("dsh run's output:\n%s", out.String())
	}
	recs, err := session.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, r := range recs {
		if r.Type == session.TypeDecision {
			from = append(from, r.Decision+" from "+r.From)
		}
	}
	if fmt.Sprint(from) != "[allow from web]" {
		t.Errorf("decisions %v, want the one the web client gave", from)
	}
	rep, err := exec.Command(bin, "replay", "--session-dir", dir, "--color", "never", id).CombinedOutput()
	if err != nil || !regexp.MustCompile(`allowed once from web`).Match(rep) {
		t.Errorf("replay (%v) does not say who allowed the call:\n%s", err, rep)
	}
	if _, err := os.Lstat(control.Path(dir, id)); !os.IsNotExist(err) {
		t.Errorf("the control socket outlived dsh run: %v", err)
	}
}
