package bash

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/supervisor"
)

const (
	// killGrace is how long a process group gets between SIGTERM and SIGKILL.
	killGrace = 2 * time.Second
	// drainWait is how long processes the shell started may outlive it before
	// they are leftovers and are killed.
	drainWait = 100 * time.Millisecond
	// closeWait bounds the wait for the supervisor beyond the grace period.
	closeWait = time.Second
	readSize  = 256 << 10
	pipeSize  = 1 << 20
)

// cwdTrailer runs the command with eval (so that a cd takes effect in this shell)
// with fd 3 closed for it, then reports the shell's final directory on fd 3 and
// exits with the command's status. The command arrives as $1, which is shifted
// away and unset so that the command sees no trace of the wrapper.
const cwdTrailer = `__dsh_c=$1; shift; eval "unset __dsh_c; $__dsh_c" 3>&-
__dsh_s=$?; pwd -P >&3 2>/dev/null; exit $__dsh_s`

// spec is what to run and where its output goes.
type spec struct {
	command  string
	dir      string
	env      []string
	trackCwd bool            // report the shell's final directory (foreground commands)
	sandbox  *sandbox.Policy // nil: not sandboxed
	out      io.Writer       // called from one goroutine at a time
	// session, if set, is the supervisor of the session's foreground
	// commands; else the command gets a supervisor of its own.
	session *supervisor.Session
	// inline leaves the reading of the output to the caller (process.wait),
	// which would only wait for it: one goroutine and one hand-off fewer.
	inline bool
}

// process is a shell command running under a supervisor, in its own process
// group: when it ends, is terminated or dsh dies, nothing it started is left.
type process struct {
	sup  *supervisor.Process
	pgid int

	exited chan struct{} // the shell and every process it started are gone, and its output has ended
	done   chan struct{} // and its final directory is read

	// Set before exited is closed.
	exit supervisor.Exit
	// Set before done is closed.
	cwd string // the shell's final directory, if trackCwd and it got that far

	termOnce sync.Once

	// wait reads the output and waits until done, for an inline spec.
	wait func()
}

// shell is bash if there is one on $PATH, else /bin/sh. The lookup stats every
// $PATH entry, so it is kept for as long as $PATH stays the same.
func shell() string {
	path := os.Getenv("PATH")
	shellMu.Lock()
	defer shellMu.Unlock()
	if shellFor.path != path || shellFor.sh == "" {
		shellFor.path, shellFor.sh = path, "/bin/sh"
		if p, err := exec.LookPath("bash"); err == nil {
			shellFor.sh = p
		}
	}
	return shellFor.sh
}

var (
	shellMu  sync.Mutex
	shellFor struct{ path, sh string }
)

// readBufs are the output readers' buffers: a command's 256 KiB are reused by
// the next instead of allocated and zeroed again.
var readBufs = sync.Pool{New: func() any { return new([readSize]byte) }}

func spawn(s spec) (*process, error) {
	outR, outW, err := commandPipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	growPipe(outR)
	sh := shell()
	args := []string{sh, "-c", s.command}
	if s.trackCwd {
		args = []string{sh, "-c", cwdTrailer, "dsh", s.command}
	}
	var cwdR, cwdW *os.File
	if s.trackCwd {
		if cwdR, cwdW, err = commandPipe(); err != nil {
			_ = outR.Close()
			_ = outW.Close()
			return nil, fmt.Errorf("cwd pipe: %w", err)
		}
	}
	// One pipe for stdout and stderr: they interleave as produced.
	start := supervisor.Start
	if s.session != nil {
		start = s.session.Start
	}
	sup, err := start(supervisor.Spec{Path: sh, Args: args, Dir: s.dir, Env: s.env,
		Output: outW, Extra: cwdW, Sandbox: s.sandbox, Grace: killGrace, Drain: drainWait, Handoff: true})
	_ = outW.Close() // closed already if it started
	if cwdW != nil {
		_ = cwdW.Close()
	}
	if err != nil {
		_ = outR.Close()
		if cwdR != nil {
			_ = cwdR.Close()
		}
		return nil, err
	}
	p := &process{sup: sup, pgid: sup.Pgid, exited: make(chan struct{}), done: make(chan struct{})}
	if s.inline {
		p.wait = func() { p.supervise(outR, cwdR, s.out) }
	} else {
		go p.supervise(outR, cwdR, s.out)
	}
	return p, nil
}

func (p *process) supervise(outR, cwdR *os.File, out io.Writer) {
	// The supervisor says how the command ended once the shell and everything
	// it started are gone, leftovers killed. Follow reads that and the
	// output on this goroutine: the end of a command wakes it once.
	bp := readBufs.Get().(*[readSize]byte)
	p.exit = p.sup.Follow(outR, out, bp[:])
	readBufs.Put(bp)
	_ = outR.Close()
	close(p.exited)
	var cwd []byte
	if cwdR != nil {
		// The shell wrote it before it exited (a pipe holds far more than a
		// path), and no command has the pipe (fd 3 is closed for it): what
		// is not there at once (EAGAIN) never comes.
		cwd, _ = io.ReadAll(io.LimitReader(cwdR, 64<<10))
		_ = cwdR.Close()
	}
	p.cwd = strings.TrimSuffix(string(cwd), "\n")
	close(p.done)
}

// commandPipe returns a pipe for a command's output: the write end, which
// only the command uses, a plain blocking descriptor; the read end
// non-blocking, not registered with the runtime's poller (Follow watches the
// output with the supervisor's status; the cwd is read once the writer is
// gone). os.Pipe would register both ends with the poller, two epoll_ctl
// calls each for a pipe per command.
func commandPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	r, w = os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
	err = syscall.SetNonblock(p[0], true) // after NewFile: not polled
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, nil, err
	}
	return r, w, nil
}

// growPipe enlarges the output pipe so that a fast writer and this reader switch
// less often; it is only an optimisation, so a refusal is ignored.
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

// terminate ends the command and everything it started: SIGTERM, then SIGKILL
// after the grace period (the supervisor escalates; dsh kills the supervisor
// too if it does not answer). It returns once they are gone.
func (p *process) terminate() {
	p.termOnce.Do(func() {
		p.sup.Terminate()
		if !waitOrTimeout(p.exited, killGrace+closeWait) {
			p.sup.Kill()
		}
	})
	<-p.exited
}

// kill ends the process group at once with SIGKILL — the exit path, which does
// not wait out the grace — and returns once the shell has exited.
func (p *process) kill() {
	p.termOnce.Do(p.sup.Kill)
	p.sup.Kill() // a terminate still in its grace
	<-p.exited
}

// exitStatus says how the shell ended; valid once exited is closed.
type exitStatus struct {
	code   *int   // nil when killed by a signal
	signal string // e.g. "SIGKILL"
}

func (p *process) status() exitStatus {
	ws := p.exit.Status
	if ws.Signaled() {
		return exitStatus{signal: signalName(ws.Signal())}
	}
	code := ws.ExitStatus()
	return exitStatus{code: &code}
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

func (e exitStatus) String() string {
	if e.code != nil {
		return fmt.Sprintf("exited %d", *e.code)
	}
	return "killed by " + e.signal
}

// waitOrTimeout waits for ch to close, at most d; it reports whether ch closed.
func waitOrTimeout(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
