package supervisor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// The test binary is also a parent that dies: it starts a supervised command,
// says "ready", and waits to be killed.
func TestMain(m *testing.M) {
	if cmd := os.Getenv("SUPERVISOR_TEST_PARENT"); cmd != "" {
		p, err := Start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", cmd}, Env: os.Environ(),
			Output: os.Stderr, Grace: time.Second, Drain: 100 * time.Millisecond})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("ready", p.Pgid)
		time.Sleep(time.Hour) // until killed (select{} would be a deadlock the runtime ends)
	}
	os.Exit(m.Run())
}

func start(t *testing.T, command string) *Process {
	t.Helper()
	p, err := Start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", command}, Env: os.Environ(),
		Output: os.Stderr, Grace: 500 * time.Millisecond, Drain: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEscapeesAreKilled: processes that leave the command's process group
// (setsid, a double fork into a new session, a daemon that ignores SIGTERM) are
// killed when the command exits.
func TestEscapeesAreKilled(t *testing.T) {
	for _, tc := range []struct{ name, command string }{
		{"setsid -f", "setsid -f sleep MARK"},
		{"double fork", "(setsid sh -c 'sleep MARK & sleep MARK' &) ; sleep 0.2"},
		{"nohup and no TERM", `setsid -f sh -c 'trap "" TERM HUP; sleep MARK'`},
		{"group leftover", "sleep MARK &"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := proctest.Marker()
			p := start(t, strings.ReplaceAll(tc.command, "MARK", mark))
			e := p.Wait()
			if !e.Status.Exited() || e.Status.ExitStatus() != 0 {
				t.Errorf("status = %v, want exit 0", e.Status)
			}
			if !e.Leftovers {
				t.Error("leftovers not reported")
			}
			proctest.NoneRunning(t, mark)
		})
	}
}

func TestExitStatus(t *testing.T) {
	for command, want := range map[string]string{
		"exit 3":        "exit status 3",
		"kill -9 $$":    "signal: killed",
		"kill -TERM $$": "signal: terminated",
	} {
		e := start(t, command).Wait()
		if got := statusString(e.Status); got != want || e.Leftovers {
			t.Errorf("%s: %s, leftovers %v; want %s", command, got, e.Leftovers, want)
		}
	}
}

func statusString(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "signal: " + map[syscall.Signal]string{syscall.SIGKILL: "killed", syscall.SIGTERM: "terminated"}[ws.Signal()]
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

// TestTerminate: SIGTERM reaches the escapees too, and a command that ignores
// it is killed after the grace time.
func TestTerminate(t *testing.T) {
	mark := proctest.Marker()
	p := start(t, fmt.Sprintf(`setsid -f sh -c 'trap "" TERM; sleep %s'; trap "" TERM; sleep %s`, mark, mark))
	proctest.WaitRunning(t, mark, 2)
	p.Terminate()
	e := p.Wait()
	if !e.Status.Signaled() || e.Status.Signal() != syscall.SIGKILL {
		t.Errorf("status = %v, want killed by SIGKILL after the grace time", e.Status)
	}
	proctest.NoneRunning(t, mark)
}

// TestSupervisorKilled: when the supervisor itself is killed, what it had
// adopted is adopted by the caller, a subreaper, and Wait kills it.
func TestSupervisorKilled(t *testing.T) {
	mark := proctest.Marker()
	p := start(t, fmt.Sprintf("setsid -f sleep %s; sleep %s", mark, mark))
	proctest.WaitRunning(t, mark, 2)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	e := p.Wait()
	if !e.Leftovers {
		t.Error("the orphans were not reported")
	}
	proctest.NoneRunning(t, mark)
}

// TestParentKilled: nothing outlives a parent killed with SIGKILL.
func TestParentKilled(t *testing.T) {
	mark := proctest.Marker()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "SUPERVISOR_TEST_PARENT="+fmt.Sprintf(
		"setsid -f sleep %s; (setsid sleep %s &); trap '' TERM HUP; sleep %s", mark, mark, mark))
	var stderr strings.Builder
	parent.Stderr = &stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready") {
		t.Fatalf("parent: %q", line)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("parent's stderr: %s", stderr.String())
		}
	})
	proctest.WaitRunning(t, mark, 3)
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err) // the parent must still be alive here, or the test proves nothing
	}
	_ = parent.Wait()
	proctest.NoneRunning(t, mark)
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Spec{Path: "/nonexistent/sh", Args: []string{"sh"}, Env: os.Environ(), Output: os.Stderr}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing program: %v", err)
	}
	if _, err := Start(Spec{Path: "/bin/sh", Args: []string{"sh"}, Dir: "/nonexistent", Env: os.Environ(), Output: os.Stderr}); err == nil {
		t.Error("missing directory: no error")
	}
}

// TestCommandEnvironment: the command gets Env and fd 3 (Extra), and none of the
// supervisor's own plumbing.
func TestCommandEnvironment(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	p, err := Start(Spec{Path: bash, Args: []string{"bash", "-c", `echo "[$X][${DSH_INTERNAL_SUPERVISOR-unset}][${GORACE-unset}]" >&3; ls /proc/self/fd | tr '\n' ' ' >&3`},
		Env: []string{"X=1", "PATH=" + os.Getenv("PATH")}, Output: os.Stderr, Extra: w})
	_ = w.Close()
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	b := make([]byte, 4000)
	n, _ := r.Read(b)
	// fds: 0, 1, 2, 3, and the one ls reads /proc/self/fd with.
	if got := string(b[:n]); got != "[1][unset][unset]\n0 1 2 3 4 " {
		t.Errorf("command saw %q", got)
	}
}
