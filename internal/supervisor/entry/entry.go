// Package entry is the supervisor's side of package supervisor: the process
// that Start re-executes (/proc/self/exe) becomes the supervisor in this
// package's init, before the rest of dsh initialises, so that a command costs
// little more than its own fork and exec.
//
// Go initialises packages in the order of their import paths, each once its
// imports are done: this package therefore imports only the runtime's own
// (os, os/signal, syscall, time) and confine, which imports less, so that it
// comes before every heavy package (templates, regular expressions, the TUI's
// terminal probes). Keep it so; GODEBUG=inittrace=1 shows the order.
package entry

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

// EnvParent marks the re-executed binary as a supervisor and holds the pid
// of its parent. The supervisor starts before there is a command to run (a
// spare, see package supervisor), and receives its Config and the command's
// descriptors on ControlFD.
const EnvParent = "DSH_INTERNAL_SUPERVISOR"

// The supervisor's file descriptors beyond stdio.
const (
	StatusFD  = 3 // the status pipe to Start
	ControlFD = 4 // a unix socket: one message, the Config with the command's output and extra descriptors
)

// MaxConfig bounds the Config message (the command's environment is most of it).
const MaxConfig = 1 << 20

// Config is what the supervisor runs.
type Config struct {
	Path string
	Args []string
	Dir  string
	Env  []string // the command's whole environment
	// Extra is whether a second descriptor came with the config: the
	// command's fd 3. The first is its stdout and stderr.
	Extra bool
	Grace time.Duration
	Drain time.Duration
	// Sandbox, if set, confines the command (not the supervisor).
	Sandbox *confine.Rules
	// Mounted is whether the supervisor runs in its own user and mount
	// namespaces (confine.CloneFlags), where it applies Sandbox.Mount.
	Mounted bool
}

// Every binary that links this package, dsh and the test binaries alike, can
// be the supervisor.
func init() {
	if parent, ok := syscall.Getenv(EnvParent); ok {
		os.Exit(supervise(parent))
	}
}

func supervise(parent string) int {
	syscall.CloseOnExec(StatusFD)
	syscall.CloseOnExec(ControlFD)
	// Descriptors dsh inherited without close-on-exec stop here.
	const sysCloseRange, closeRangeCloexec = 436, 4
	_, _, _ = syscall.RawSyscall(sysCloseRange, ControlFD+1, ^uintptr(0), closeRangeCloexec)
	status := os.NewFile(StatusFD, "status")
	fail := func(err error) int {
		_, _ = status.WriteString("error " + err.Error() + "\n")
		return 1
	}
	// Orphaned descendants of the command become this process's children, so
	// that it can find and kill those that left the command's process group.
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fail(wrap("subreaper", errno))
	}
	// SIGHUP is the parent-death signal Start arms (it follows the thread that
	// forked this process, and dsh never ends a thread); the parent may have
	// died before it was armed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if ppid, _ := atoi(parent); os.Getppid() != ppid {
		return 1
	}
	// Start maps this process's user namespace (if it has one) once it is
	// here: dsh is not dumpable, so only a process that has run exec can be.
	_, _ = status.WriteString("ready\n")
	c, files, err := receive()
	if err != nil {
		return fail(err)
	}
	if c.Mounted && c.Sandbox != nil {
		if err := c.Sandbox.Mount(); err != nil {
			return fail(wrap("sandbox", err))
		}
	}
	s := &supervisor{c: c, reaped: make(chan reaped, 16)}
	pid, err := s.start(files)
	if err != nil {
		return fail(err)
	}
	for _, f := range append(files[1:2], files[3:]...) {
		_ = f.Close() // the command's now
	}
	_, _ = status.WriteString("started " + itoa(pid) + "\n")
	ws, leftovers := s.watch(pid, sigs)
	l := "false"
	if leftovers {
		l = "true"
	}
	_, _ = status.WriteString("exit " + itoa(int(uint32(ws))) + " " + l + "\n")
	return 0
}

type reaped struct {
	pid int
	ws  syscall.WaitStatus
}

type supervisor struct {
	c         Config
	reaped    chan reaped   // children as they are reaped, then pid -1: none is left
	cmdExited chan struct{} // closed when the command is reaped (sandboxed start only)
}

// start starts the command in a session of its own, without a controlling
// terminal (it cannot type into dsh's), with a parent-death signal. A
// sandboxed command is started from an OS thread that carries the sandbox, so
// that the command has it and this process does not; the thread lives until
// the command exits, because the parent-death signal fires when the thread
// that forked the command ends.
func (s *supervisor) start(files []*os.File) (int, error) {
	attr := &os.ProcAttr{Dir: s.c.Dir, Env: s.c.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
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
		if err := s.c.Sandbox.RestrictThread(s.c.Mounted); err != nil {
			res <- started{err: wrap("sandbox", err)}
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
func (s *supervisor) watch(cmd int, sigs <-chan os.Signal) (ws syscall.WaitStatus, leftovers bool) {
	go s.reap()
	var (
		cmdDone, terminating, killing bool
		grace, drain, again           <-chan time.Time
	)
	kill := func() {
		killing = true
		s.signalAll(cmd, syscall.SIGKILL)
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
				drain = time.After(s.c.Drain)
			}
		case sig := <-sigs:
			switch {
			case sig == syscall.SIGHUP && !killing:
				kill()
			case !terminating && !killing:
				terminating = true
				s.signalAll(cmd, syscall.SIGTERM)
				grace = time.After(s.c.Grace)
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
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
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
func (s *supervisor) signalAll(cmd int, sig syscall.Signal) {
	_ = syscall.Kill(-cmd, sig)
	for _, pid := range Descendants(Processes(), os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// receive waits for the config and the command's descriptors. The command's
// stdin is this process's (/dev/null). It fails when the parent closed the
// socket without sending, which is how an unused spare ends with dsh.
func receive() (Config, []*os.File, error) {
	buf := make([]byte, MaxConfig)
	oob := make([]byte, syscall.CmsgSpace(2*4))
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = syscall.Recvmsg(ControlFD, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if err != syscall.EINTR {
			break
		}
	}
	_ = syscall.Close(ControlFD)
	if err != nil {
		return Config{}, nil, wrap("supervisor config", err)
	}
	if n == 0 {
		return Config{}, nil, errString("no command")
	}
	var fds []int
	if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			rights, _ := syscall.ParseUnixRights(&m)
			fds = append(fds, rights...)
		}
	}
	c, ok := Decode(string(buf[:n]))
	want := 1
	if c.Extra {
		want = 2
	}
	if !ok || flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) != 0 || len(fds) != want {
		return Config{}, nil, errString("bad supervisor config")
	}
	out := os.NewFile(uintptr(fds[0]), "output")
	files := []*os.File{os.Stdin, out, out}
	if c.Extra {
		files = append(files, os.NewFile(uintptr(fds[1]), "extra"))
	}
	return c, files, nil
}

type errString string

func (e errString) Error() string { return string(e) }

func wrap(step string, err error) error { return &confine.Error{Step: step, Err: err} }
