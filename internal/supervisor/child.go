package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/sandbox"
)

// envConfig carries the supervisor's config from Start to the re-executed
// binary; the supervisor removes it before it starts the command.
const envConfig = "DSH_INTERNAL_SUPERVISOR"

// The supervisor's file descriptors beyond stdio.
const (
	statusFD = 3 // the status pipe to Start
	extraFD  = 4 // Spec.Extra, which the command gets as its fd 3
)

type config struct {
	Parent  int             `json:"parent"`
	Path    string          `json:"path"`
	Args    []string        `json:"args"`
	Extra   bool            `json:"extra,omitzero"`
	GraceMS int64           `json:"graceMs"`
	DrainMS int64           `json:"drainMs"`
	Sandbox *sandbox.Policy `json:"sandbox,omitzero"`
	// GORACE is the command's own GORACE setting ("" unset) when the
	// supervisor's was replaced (race builds only).
	GORACE *string `json:"gorace,omitzero"`
}

// Every binary that links this package, dsh and the test binaries alike, can
// be the supervisor: Start re-executes /proc/self/exe with envConfig set, and
// this takes over before main runs.
func init() {
	if raw, ok := os.LookupEnv(envConfig); ok {
		os.Exit(supervise(raw))
	}
}

func supervise(raw string) int {
	_ = os.Unsetenv(envConfig)
	syscall.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "status")
	fail := func(err error) int {
		fmt.Fprintf(status, "error %v\n", err)
		return 1
	}
	var c config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return fail(fmt.Errorf("supervisor config: %w", err))
	}
	if c.GORACE != nil {
		_ = os.Unsetenv("GORACE")
		if *c.GORACE != "" {
			_ = os.Setenv("GORACE", *c.GORACE)
		}
	}
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	if c.Extra {
		syscall.CloseOnExec(extraFD)
		files = append(files, os.NewFile(extraFD, "extra"))
	}
	// Descriptors dsh inherited without close-on-exec stop here.
	_ = unix.CloseRange(extraFD+1, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// Orphaned descendants of the command become this process's children, so
	// that it can find and kill those that left the command's process group.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("subreaper: %w", err))
	}
	// SIGHUP is the parent-death signal Start arms (it follows the thread that
	// forked this process, and dsh never ends a thread); the parent may have
	// died before it was armed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if os.Getppid() != c.Parent {
		return 1
	}
	s := &supervisor{c: c, reaped: make(chan reaped, 16)}
	pid, err := s.start(files)
	if err != nil {
		return fail(err)
	}
	for _, f := range files[3:] {
		_ = f.Close()
	}
	fmt.Fprintf(status, "started %d\n", pid)
	ws, leftovers := s.watch(pid, sigs)
	fmt.Fprintf(status, "exit %d %t\n", uint32(ws), leftovers)
	return 0
}

type reaped struct {
	pid int
	ws  unix.WaitStatus
}

type supervisor struct {
	c         config
	reaped    chan reaped   // children as they are reaped, then pid -1: none is left
	cmdExited chan struct{} // closed when the command is reaped (sandboxed start only)
}

// start starts the command in its own process group with a parent-death
// signal. A sandboxed command is started from an OS thread that carries the
// Landlock domain, so that the command has it and this process does not; the
// thread lives until the command exits, because the parent-death signal fires
// when the thread that forked the command ends.
func (s *supervisor) start(files []*os.File) (int, error) {
	attr := &os.ProcAttr{Env: os.Environ(), Files: files,
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	if s.c.Sandbox == nil {
		p, err := os.StartProcess(s.c.Path, s.c.Args, attr)
		if err != nil {
			return 0, err
		}
		return p.Pid, nil
	}
	type started struct {
		pid int
		err error
	}
	res := make(chan started, 1)
	s.cmdExited = make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := s.c.Sandbox.RestrictThread(); err != nil {
			res <- started{err: fmt.Errorf("sandbox: %w", err)}
			return
		}
		p, err := os.StartProcess(s.c.Path, s.c.Args, attr)
		if err != nil {
			res <- started{err: err}
			return
		}
		res <- started{pid: p.Pid}
		<-s.cmdExited
	}()
	r := <-res
	return r.pid, r.err
}

// watch reaps every child until none is left and returns how the command
// ended. Once the command has exited, descendants still running after the
// drain time are leftovers and are killed; SIGTERM or SIGINT terminates the
// command and everything it started (SIGKILL after the grace time); SIGHUP,
// the parent's death, kills everything at once.
func (s *supervisor) watch(cmd int, sigs <-chan os.Signal) (ws unix.WaitStatus, leftovers bool) {
	go s.reap()
	var (
		cmdDone, terminating, killing bool
		grace, drain, again           <-chan time.Time
	)
	kill := func() {
		killing = true
		s.signalAll(cmd, unix.SIGKILL)
		again = time.After(20 * time.Millisecond) // catch what was forked meanwhile
	}
	for {
		select {
		case r := <-s.reaped:
			if r.pid < 0 {
				return ws, leftovers
			}
			if r.pid != cmd {
				continue
			}
			ws, cmdDone = r.ws, true
			if s.cmdExited != nil {
				close(s.cmdExited)
			}
			if terminating && !killing {
				kill()
			} else if !killing {
				drain = time.After(time.Duration(s.c.DrainMS) * time.Millisecond)
			}
		case sig := <-sigs:
			switch {
			case sig == syscall.SIGHUP && !killing:
				kill()
			case !terminating && !killing:
				terminating = true
				s.signalAll(cmd, unix.SIGTERM)
				grace = time.After(time.Duration(s.c.GraceMS) * time.Millisecond)
			}
		case <-grace:
			if !killing {
				kill()
			}
		case <-drain:
			if cmdDone && !killing {
				leftovers = true
				kill()
			}
		case <-again:
			kill()
		}
	}
}

// reap waits for every child: the command and the orphans this subreaper
// adopts. It ends with pid -1 when no child is left, which, as the command is
// a child, means that it and all its descendants are gone.
func (s *supervisor) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case err != nil: // ECHILD
			s.reaped <- reaped{pid: -1}
			return
		default:
			s.reaped <- reaped{pid, ws}
		}
	}
}

// signalAll sends sig to the command's process group and to every descendant
// of this process, in the group or not.
func (s *supervisor) signalAll(cmd int, sig unix.Signal) {
	_ = unix.Kill(-cmd, sig)
	for _, pid := range descendants(processes(), os.Getpid()) {
		_ = unix.Kill(pid, sig)
	}
}
