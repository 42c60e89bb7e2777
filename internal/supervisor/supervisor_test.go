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
		start := Start
		if os.Getenv("SUPERVISOR_TEST_SESSION") != "" {
			start = new(Session).Start
		}
		p, err := start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", cmd}, Env: os.Environ(),
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

// starter starts a command, under a supervisor of its own or a session's.
type starter func(t *testing.T, command string) *Process

// modes runs f with a supervisor per command, and with one session's: every
// guarantee holds for both.
func modes(t *testing.T, f func(t *testing.T, start starter)) {
	modesDrained(t, 100*time.Millisecond, f)
}

// modesDrained is modes with commands whose descendants may outlive them by
// drain.
func modesDrained(t *testing.T, drain time.Duration, f func(t *testing.T, start starter)) {
	t.Run("own", func(t *testing.T) { f(t, startWith(Start, drain)) })
	t.Run("session", func(t *testing.T) {
		s := new(Session)
		t.Cleanup(s.Close)
		f(t, startWith(s.Start, drain))
	})
}

func startWith(start func(Spec) (*Process, error), drain time.Duration) starter {
	return func(t *testing.T, command string) *Process {
		t.Helper()
		p, err := start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", command}, Env: os.Environ(),
			Output: os.Stderr, Grace: 500 * time.Millisecond, Drain: drain})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestEscapeesAreKilled: processes that leave the command's process group
// (setsid, a double fork into a new session, a daemon that ignores SIGTERM) are
// killed when the command exits.
func TestEscapeesAreKilled(t *testing.T) { modes(t, testEscapeesAreKilled) }

func testEscapeesAreKilled(t *testing.T, start starter) {
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

func TestExitStatus(t *testing.T) { modes(t, testExitStatus) }

func testExitStatus(t *testing.T, start starter) {
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

// TestOrphansThatEndAreNotLeftovers: what the command left that ends by
// itself within the drain time is reaped as it ends, not killed as a
// leftover, whether it ends after the command or before.
// Its orphans end well within the drain time, however busy the machine:
// under load a 30 ms orphan's shells can take longer than the 100 ms the
// other tests drain for.
func TestOrphansThatEndAreNotLeftovers(t *testing.T) {
	modesDrained(t, 10*time.Second, testOrphansThatEnd)
}

func testOrphansThatEnd(t *testing.T, start starter) {
	for _, command := range []string{
		"(sleep 0.03 &) ; true",                   // an orphan that ends after the command
		"(setsid sh -c 'sleep 0.03' &) ; true",    // in a session of its own
		"(true &) ; (true &) ; sleep 0.05 ; true", // orphans that end while it runs
	} {
		e := start(t, command).Wait()
		if got := statusString(e.Status); got != "exit status 0" || e.Leftovers {
			t.Errorf("%s: %s, leftovers %v; want exit status 0 and none", command, got, e.Leftovers)
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
func TestTerminate(t *testing.T) { modes(t, testTerminate) }

func testTerminate(t *testing.T, start starter) {
	mark := proctest.Marker()
	// Split in the script, so that only the sleeps, started once their
	// shells ignore SIGTERM, carry the marker.
	split := `"` + mark[:2] + `""` + mark[2:] + `"`
	p := start(t, fmt.Sprintf(`setsid -f sh -c 'trap "" TERM; sleep %s'; trap "" TERM; sleep %s`, split, split))
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
func TestSupervisorKilled(t *testing.T) { modes(t, testSupervisorKilled) }

func testSupervisorKilled(t *testing.T, start starter) {
	mark := proctest.Marker()
	p := start(t, fmt.Sprintf("setsid -f sleep %s; sleep %s", mark, mark))
	proctest.WaitRunning(t, mark, 2)
	if err := p.sp.cmd.Process.Kill(); err != nil {
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
	for _, mode := range []string{"", "session"} {
		t.Run("mode="+mode, func(t *testing.T) { testParentKilled(t, mode) })
	}
}

func testParentKilled(t *testing.T, mode string) {
	mark := proctest.Marker()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "SUPERVISOR_TEST_SESSION="+mode, "SUPERVISOR_TEST_PARENT="+fmt.Sprintf(
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
	s := new(Session)
	t.Cleanup(s.Close)
	for name, start := range map[string]func(Spec) (*Process, error){"own": Start, "session": s.Start} {
		t.Run(name, func(t *testing.T) { testStartErrors(t, start) })
	}
	if p := startWith(s.Start, 100*time.Millisecond)(t, "true"); p.session == nil {
		t.Error("the session's supervisor did not stay after commands that could not start")
	} else {
		p.Wait()
	}
}

func testStartErrors(t *testing.T, start func(Spec) (*Process, error)) {
	if _, err := start(Spec{Path: "/nonexistent/sh", Args: []string{"sh"}, Env: os.Environ(), Output: os.Stderr}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing program: %v", err)
	}
	if _, err := start(Spec{Path: "/bin/sh", Args: []string{"sh"}, Dir: "/nonexistent", Env: os.Environ(), Output: os.Stderr}); err == nil {
		t.Error("missing directory: no error")
	}
}

// TestCommandEnvironment: the command gets Env and fd 3 (Extra), and none of the
// supervisor's own plumbing.
func TestCommandEnvironment(t *testing.T) {
	s := new(Session)
	t.Cleanup(s.Close)
	for name, start := range map[string]func(Spec) (*Process, error){"own": Start, "session": s.Start} {
		t.Run(name, func(t *testing.T) {
			testCommandEnvironment(t, start)
			testCommandEnvironment(t, start) // a session's second command sees no more
		})
	}
}

func testCommandEnvironment(t *testing.T, start func(Spec) (*Process, error)) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	p, err := start(Spec{Path: bash, Args: []string{"bash", "-c", `echo "[$X][${DSH_INTERNAL_SUPERVISOR-unset}][${GORACE-unset}]" >&3; ls /proc/self/fd | tr '\n' ' ' >&3`},
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

// TestSessionKeepsItsSupervisor: a session's commands, one after another, run
// under one supervisor; one that comes while another runs gets its own; Close
// ends the session's supervisor.
func TestSessionKeepsItsSupervisor(t *testing.T) {
	s := new(Session)
	run := startWith(s.Start, 100*time.Millisecond)
	first := run(t, "true")
	sup := first.sp.cmd.Process.Pid
	first.Wait()
	long := run(t, "sleep 0.3")
	if long.sp.cmd.Process.Pid != sup {
		t.Errorf("the second command ran under supervisor %d, not the session's %d", long.sp.cmd.Process.Pid, sup)
	}
	meanwhile := run(t, "true")
	if meanwhile.sp.cmd.Process.Pid == sup || meanwhile.session != nil {
		t.Error("a command started while another ran shares its supervisor")
	}
	meanwhile.Wait()
	long.Wait()
	s.Close()
	if long.sp.cmd.ProcessState == nil {
		t.Error("Close left the session's supervisor running")
	}
	if p := run(t, "true"); p.session != nil {
		t.Error("a command after Close ran under the closed session")
	} else {
		p.Wait()
	}
}

// TestSessionTerminateIsForItsCommand: a late Terminate or Kill of a command
// that has ended does not reach the session's next command.
func TestSessionTerminateIsForItsCommand(t *testing.T) {
	s := new(Session)
	t.Cleanup(s.Close)
	run := startWith(s.Start, 100*time.Millisecond)
	done := run(t, "true")
	done.Wait()
	next := run(t, "sleep 0.3; exit 7")
	done.Terminate()
	done.Kill()
	if e := next.Wait(); !e.Status.Exited() || e.Status.ExitStatus() != 7 {
		t.Errorf("the next command ended with %v, want exit 7", e.Status)
	}
}

// TestSessionCloseKillsTheRunningCommand: closing a session while its
// command runs kills the command and what it started.
func TestSessionCloseKillsTheRunningCommand(t *testing.T) {
	mark := proctest.Marker()
	s := new(Session)
	p := startWith(s.Start, 100*time.Millisecond)(t, fmt.Sprintf("setsid -f sleep %s; sleep %s", mark, mark))
	proctest.WaitRunning(t, mark, 2)
	s.Close()
	if e := p.Wait(); !e.Status.Signaled() {
		t.Errorf("status = %v, want killed", e.Status)
	}
	proctest.NoneRunning(t, mark)
}

// TestStoppedSupervisorIsContinued: a supervisor stopped before it says the
// command started (a command can kill -STOP $PPID that early) is continued,
// so Start returns instead of waiting for ever.
func TestStoppedSupervisorIsContinued(t *testing.T) {
	s := new(Session)
	t.Cleanup(s.Close)
	run := startWith(s.Start, 100*time.Millisecond)
	run(t, "true").Wait() // the session's supervisor, idle now
	sup := s.sp.cmd.Process
	if err := sup.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	started := make(chan *Process, 1)
	go func() {
		p, err := s.Start(Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "exit 3"}, Env: os.Environ(),
			Output: os.Stderr, Grace: 500 * time.Millisecond, Drain: 100 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		started <- p
	}()
	select {
	case p := <-started:
		if p == nil {
			return
		}
		if e := p.Wait(); !e.Status.Exited() || e.Status.ExitStatus() != 3 {
			t.Errorf("the command ended with %v, want exit 3", e.Status)
		}
	case <-time.After(time.Minute):
		_ = sup.Signal(syscall.SIGCONT) // let the test end
		t.Fatal("Start waited on a stopped supervisor")
	}
}
