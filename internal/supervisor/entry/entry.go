// Package entry is the supervisor's side of package supervisor: the process
// that Start re-executes (/proc/self/exe) becomes the supervisor in this
// package's init, before the rest of dsh initialises. It runs one command, or,
// for a session (Config.Stay), one after another, each at the cost of its
// fork and exec.
//
// Go initialises packages in the order of their import paths, each once its
// imports are done: this package therefore imports only the runtime's own
// (errors, os, os/signal, syscall, time, unsafe) and confine, which imports less, so that it
// comes before every heavy package (templates, regular expressions, the TUI's
// terminal probes). Keep it so; GODEBUG=inittrace=1 shows the order.
package entry

import (
	"errors"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

// EnvParent marks the re-executed binary as a supervisor and holds the pid
// of its parent. The supervisor starts before there is a command to run (a
// spare, see package supervisor), and receives its Config and the command's
// descriptors on ControlFD.
const EnvParent = "DSH_INTERNAL_SUPERVISOR"

// The supervisor's file descriptors beyond stdio.
const (
	StatusFD  = 3 // the status pipe to Start: "ready", then per command "started PID" or "error …", and "exit STATUS LEFTOVERS"
	ControlFD = 4 // a unix socket: Config messages with the command's descriptors; Terminate, in a supervisor that stays
)

// Terminate is the control message that terminates the running command of a
// supervisor that stays (Config.Stay); one that comes between commands is
// for a command already gone, and is ignored.
const Terminate = "term"

// MaxConfig bounds the Config message (the command's environment is most of it).
const MaxConfig = 1 << 20

// Config is what the supervisor runs.
type Config struct {
	Path string
	Args []string
	Dir  string
	Env  []string // the command's whole environment
	// Extra is whether a descriptor for the command's fd 3 came with the
	// config, Input one for its stdin (else /dev/null) and Errors one for its
	// stderr (else its stdout). The first descriptor is always its stdout;
	// the others follow in this order.
	Extra, Input, Errors bool
	Grace                time.Duration
	Drain                time.Duration
	// Sandbox, if set, confines the command (not the supervisor).
	Sandbox *confine.Rules
	// Mounted is whether the supervisor runs in its own user and mount
	// namespaces (confine.CloneFlags), where it applies Sandbox.Mount.
	Mounted bool
	// ProxyPort, if set, gives the sandboxed command a network namespace of
	// its own (confine.IsolateNetwork) whose only way out is a socket
	// listening on this loopback port, which the supervisor sends back on the
	// control socket, for dsh's proxy to serve, before it starts the command.
	ProxyPort int
	// Stay keeps the supervisor once the command is done, for the next
	// Config on the control socket: a session's supervisor, which starts its
	// commands at the cost of a fork. Closing the socket ends it, and what it
	// runs.
	Stay bool
}

// Every binary that links this package, dsh and the test binaries alike, can
// be the supervisor.
func init() {
	if parent, ok := syscall.Getenv(EnvParent); ok {
		// Not on init's goroutine, which the runtime locks to the main thread
		// until main starts: every wake-up of a locked goroutine hands its P
		// from thread to thread.
		go func() { os.Exit(supervise(parent)) }()
		select {}
	}
}

func supervise(parent string) int {
	syscall.CloseOnExec(StatusFD)
	syscall.CloseOnExec(ControlFD)
	// Descriptors dsh inherited without close-on-exec stop here.
	const sysCloseRange, closeRangeCloexec = 436, 4
	_, _, _ = syscall.RawSyscall(sysCloseRange, ControlFD+1, ^uintptr(0), closeRangeCloexec)
	fail := func(err error) int {
		say("error " + err.Error() + "\n")
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
	// The command's exit (see exits) and the control socket are read through
	// the runtime's poller: a goroutine blocked in wait4 or recvmsg would keep
	// the supervisor's one P (GOMAXPROCS=1, fewer thread wake-ups) from the
	// goroutine it just woke until sysmon takes it back, milliseconds later.
	if err := syscall.SetNonblock(ControlFD, true); err != nil {
		return fail(wrap("control socket", err))
	}
	control := os.NewFile(ControlFD, "control")
	exits.init()
	// Start maps this process's user namespace (if it has one) once it is
	// here: dsh is not dumpable, so only a process that has run exec can be.
	say("ready\n")
	buf := make([]byte, MaxConfig)
	m := receive(control, buf)
	switch {
	case m.eof:
		return 1 // an unused spare
	case m.err != nil:
		return fail(m.err)
	}
	if !m.c.Stay {
		if m.c.ProxyPort == 0 {
			_ = control.Close() // else it carries the proxy's socket back first
		}
		if err := run(m.c, m.files, sigs, nil); err != nil {
			return fail(err)
		}
		return 0
	}
	// A session's supervisor: the socket also carries Terminate, and its end
	// is the end of the session (or of dsh).
	ctl := make(chan message, 1)
	go func() {
		for {
			m := receive(control, buf)
			ctl <- m
			if m.eof {
				return
			}
		}
	}()
	for {
		switch {
		case m.eof:
			return 0
		case m.err != nil:
			say("error " + m.err.Error() + "\n")
		case m.term: // for a command already gone
		case m.c.Sandbox != nil:
			// Its mounts and the thread that carries the sandbox are the
			// command's alone: such a command gets a supervisor of its own.
			closeAll(m.files)
			say("error a sandboxed command needs a supervisor of its own\n")
		default:
			if err := run(m.c, m.files, sigs, ctl); errors.Is(err, errEnded) {
				return 0
			} else if err != nil {
				say("error " + err.Error() + "\n")
			}
		}
		select {
		case m = <-ctl:
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				return 0
			}
			m = message{term: true} // nothing runs to terminate
		}
	}
}

// errEnded is run's answer when the control socket closed while the command
// ran: everything was killed, and the supervisor ends.
var errEnded = errString("the session ended")

// run starts the command, reports it started, watches it and reports how it
// ended. The error is why it could not start, or errEnded.
func run(c Config, files []int, sigs <-chan os.Signal, ctl <-chan message) error {
	if c.Mounted && c.Sandbox != nil {
		if err := c.Sandbox.Mount(); err != nil {
			closeAll(files)
			return wrap("sandbox", err)
		}
	}
	s := &supervisor{c: c}
	pid, err := s.start(files)
	if err != nil {
		closeAll(files)
		return err
	}
	say("started " + itoa(pid) + "\n")
	pidfd := exits.add(pid)
	ws, leftovers, ended := s.watch(pid, sigs, pidfd >= 0, ctl)
	exits.remove(pidfd)
	l := "false"
	if leftovers {
		l = "true"
	}
	say("exit " + itoa(int(uint32(ws))) + " " + l + "\n")
	// The command's output ends here, just after its exit is said, not when
	// the command exits: dsh learns both from one wake-up.
	closeAll(files)
	if ended {
		return errEnded
	}
	return nil
}

// closeAll closes the descriptors that came with a config (stdout and stderr
// may be one); 0, the command's default stdin, is kept for the next command.
func closeAll(fds []int) {
next:
	for i, fd := range fds {
		for _, earlier := range fds[:i] {
			if earlier == fd {
				continue next // closed already: the number may be another's now
			}
		}
		if fd != 0 {
			_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		}
	}
}

// say writes a line to the status pipe. The writes here, the receipt of the
// config and the start of the command are raw system calls: an ordinary one
// wakes the runtime's monitor thread, which then polls every few
// microseconds while the start blocks this process's one P in vfork. A line
// is far shorter than the pipe's atomic write, and dsh reads them as they come.
func say(line string) {
	for b := []byte(line); len(b) > 0; {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, StatusFD, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch {
		case errno == syscall.EINTR:
		case errno != 0:
			return // dsh is gone
		default:
			b = b[n:]
		}
	}
}

type supervisor struct {
	c         Config
	cmdExited chan struct{} // closed when the command is reaped (sandboxed start only)
}

// start starts the command in a session of its own, without a controlling
// terminal (it cannot type into dsh's), with a parent-death signal. A
// sandboxed command is started from an OS thread that carries the sandbox, so
// that the command has it and this process does not; the thread lives until
// the command exits, because the parent-death signal fires when the thread
// that forked the command ends.
func (s *supervisor) start(fds []int) (int, error) {
	files := make([]uintptr, len(fds))
	for i, fd := range fds {
		files[i] = uintptr(fd)
	}
	// syscall's, not os's StartProcess: that one also opens a pidfd, and
	// checks the directory, each a system call this needs not.
	attr := &syscall.ProcAttr{Dir: s.c.Dir, Env: s.c.Env, Files: files,
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	if s.c.Sandbox == nil {
		pid, _, err := syscall.StartProcess(s.c.Path, s.c.Args, attr)
		if err != nil {
			return 0, &os.PathError{Op: "fork/exec", Path: s.c.Path, Err: err}
		}
		return pid, nil
	}
	type started struct {
		pid int
		err error
	}
	res := make(chan started, 1)
	s.cmdExited = make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if s.c.ProxyPort != 0 {
			if err := isolate(s.c.ProxyPort); err != nil {
				res <- started{err: wrap("the sandbox's network", err)}
				return
			}
		}
		if err := s.c.Sandbox.RestrictThread(s.c.Mounted); err != nil {
			res <- started{err: wrap("sandbox", err)}
			return
		}
		pid, _, err := syscall.StartProcess(s.c.Path, s.c.Args, attr)
		if err != nil {
			res <- started{err: &os.PathError{Op: "fork/exec", Path: s.c.Path, Err: err}}
			return
		}
		res <- started{pid: pid}
		<-s.cmdExited
	}()
	r := <-res
	return r.pid, r.err
}

// isolate puts this thread in a network namespace of its own and sends the
// proxy's listening socket to dsh.
func isolate(port int) error {
	fd, err := confine.IsolateNetwork(port)
	if err != nil {
		return err
	}
	defer func() { _ = syscall.Close(fd) }()
	return syscall.Sendmsg(ControlFD, []byte("proxy"), syscall.UnixRights(fd), nil, 0)
}

// watch reaps every child until none is left and returns how the command
// ended. Once the command has exited, descendants still running after the
// drain time are leftovers and are killed; SIGTERM, SIGINT or Terminate
// terminates the command and everything it started (SIGKILL after the grace
// time); SIGHUP, the parent's death, and the end of the control socket kill
// everything at once, and then ended says the supervisor must end too.
func (s *supervisor) watch(cmd int, sigs <-chan os.Signal, polled bool, ctl <-chan message) (ws syscall.WaitStatus, leftovers, ended bool) {
	var (
		cmdDone, terminating, killing bool
		grace, drain, again           <-chan time.Time
		// chld carries SIGCHLD once the command's exit is not enough: it
		// left descendants, whose ends only the signal tells (or the kernel
		// has no pidfd). A signal wakes a thread of the runtime to pass it
		// on, and its monitor with it: a command that leaves nothing pays
		// none.
		chld chan os.Signal
	)
	notify := func() {
		chld = make(chan os.Signal, 1)
		signal.Notify(chld, syscall.SIGCHLD)
	}
	gone := exits.gone
	if !polled {
		gone = nil
		notify()
	}
	defer func() {
		if chld != nil {
			signal.Stop(chld)
		}
	}()
	kill := func() {
		killing = true
		s.signalAll(cmd, syscall.SIGKILL)
		again = time.After(20 * time.Millisecond) // catch what was forked meanwhile
	}
	terminate := func() {
		if !terminating && !killing {
			terminating = true
			s.signalAll(cmd, syscall.SIGTERM)
			grace = time.After(s.c.Grace)
		}
	}
	// reap reaps the children that have exited: the command and the orphans
	// this subreaper adopted. It reports whether none is left, which, as the
	// command is a child, means that it and all its descendants are gone.
	reap := func() bool {
		for {
			var st syscall.WaitStatus
			// Raw (see say): with WNOHANG it never blocks.
			r, _, errno := syscall.RawSyscall6(syscall.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&st)), syscall.WNOHANG, 0, 0, 0)
			pid := int(r)
			switch {
			case errno == syscall.EINTR:
			case errno != 0: // ECHILD
				return true
			case pid == 0:
				return false
			case pid == cmd:
				ws, cmdDone = st, true
				if s.cmdExited != nil {
					close(s.cmdExited)
				}
				if terminating && !killing {
					kill()
				} else if !killing {
					drain = time.After(s.c.Drain)
				}
			}
		}
	}
	for !reap() {
		if cmdDone && chld == nil {
			notify()
			continue // reap what ended before
		}
		select {
		case <-gone: // this command's, or one reaped before its exit was read: reap tells
		case <-chld:
		case sig := <-sigs:
			if sig != syscall.SIGHUP {
				terminate()
				continue
			}
			ended = ctl != nil
			if !killing {
				kill()
			}
		case m := <-ctl:
			if !m.eof {
				closeAll(m.files) // dsh sends no command while one runs
				if m.term {
					terminate()
				}
				continue
			}
			ended, ctl = true, nil
			if !killing {
				kill()
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
	return ws, leftovers, ended
}

// exits are the commands' exits, from their pidfds in an epoll instance that
// the runtime's poller watches: no signal, whose delivery wakes a thread of
// the runtime to pass it on, and its monitor with it. Each pidfd is added and
// removed with raw system calls, which wake neither.
var exits exitPoller

type exitPoller struct {
	ep   int           // -1 if it could not start: SIGCHLD then
	gone chan struct{} // a command has exited: reap
}

// init starts the poller's goroutine.
func (e *exitPoller) init() {
	e.ep = -1
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	if err := syscall.SetNonblock(ep, true); err != nil { // polled
		_ = syscall.Close(ep)
		return
	}
	f := os.NewFile(uintptr(ep), "exits")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return
	}
	e.ep, e.gone = ep, make(chan struct{}, 1)
	go func() {
		var ev [8]syscall.EpollEvent
		for {
			_ = rc.Read(func(fd uintptr) bool {
				n, _, _ := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
				return int(n) > 0
			})
			select {
			case e.gone <- struct{}{}:
			default: // one is pending already
			}
		}
	}()
}

// add watches pid's exit and returns its pidfd, or -1 if it cannot (the
// kernel has no pidfd before 5.3): SIGCHLD tells then.
func (e *exitPoller) add(pid int) int {
	if e.ep < 0 {
		return -1
	}
	const sysPidfdOpen = 434
	fd, _, errno := syscall.RawSyscall(sysPidfdOpen, uintptr(pid), 0, 0) // close-on-exec
	if errno != 0 {
		return -1
	}
	// One-shot: an exited process's pidfd stays readable.
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLONESHOT, Fd: int32(fd)}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(e.ep), syscall.EPOLL_CTL_ADD, fd, uintptr(unsafe.Pointer(&ev)), 0, 0); errno != 0 {
		_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		return -1
	}
	return int(fd)
}

// remove ends the watch of add.
func (e *exitPoller) remove(pidfd int) {
	if pidfd < 0 {
		return
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(e.ep), syscall.EPOLL_CTL_DEL, uintptr(pidfd), 0, 0, 0)
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(pidfd), 0, 0)
}

// signalAll sends sig to the command's process group and to every descendant
// of this process, in the group or not.
func (s *supervisor) signalAll(cmd int, sig syscall.Signal) {
	_ = syscall.Kill(-cmd, sig)
	for _, pid := range Descendants(Processes(), os.Getpid()) {
		_ = syscall.Kill(pid, sig)
	}
}

// message is one message of the control socket: a Config with the
// command's descriptors (stdin, stdout, stderr, then fd 3 if any), Terminate,
// or its end.
type message struct {
	c     Config
	files []int // stdin, stdout, stderr, then fd 3 if any
	term  bool
	eof   bool
	err   error // a config that could not be read
}

// receive waits for the next message, reading it into buf. The socket's end
// (eof) is how dsh ends an unused spare or a session's supervisor, and how
// dsh's death reaches a session's idle supervisor.
func receive(control *os.File, buf []byte) message {
	oob := make([]byte, syscall.CmsgSpace(4*4))
	var n, oobn, flags int
	var err syscall.Errno
	rc, rerr := control.SyscallConn()
	for rerr == nil {
		rerr = rc.Read(func(fd uintptr) bool {
			n, oobn, flags, err = recvmsg(int(fd), buf, oob)
			return err != syscall.EAGAIN
		})
		if err != syscall.EINTR {
			break
		}
	}
	if rerr != nil || err != 0 || n == 0 {
		return message{eof: true}
	}
	var fds []int
	if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			rights, _ := syscall.ParseUnixRights(&m)
			fds = append(fds, rights...)
		}
	}
	if string(buf[:n]) == Terminate && len(fds) == 0 {
		return message{term: true}
	}
	c, ok := Decode(string(buf[:n]))
	want := 1
	for _, b := range []bool{c.Extra, c.Input, c.Errors} {
		if b {
			want++
		}
	}
	if !ok || flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) != 0 || len(fds) != want {
		closeAll(fds)
		return message{err: errString("bad supervisor config")}
	}
	next := func() int {
		fd := fds[0]
		fds = fds[1:]
		return fd
	}
	out := next()
	extra := -1
	if c.Extra {
		extra = next()
	}
	files := []int{0, out, out}
	if c.Input {
		files[0] = next()
	}
	if c.Errors {
		files[2] = next()
	}
	if extra >= 0 {
		files = append(files, extra)
	}
	return message{c: c, files: files}
}

// recvmsg is syscall.Recvmsg as a raw system call (see say), on a
// non-blocking socket.
func recvmsg(fd int, p, oob []byte) (n, oobn, flags int, err syscall.Errno) {
	iov := syscall.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	msg := syscall.Msghdr{Iov: &iov, Iovlen: 1, Control: &oob[0]}
	msg.SetControllen(len(oob))
	r, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), syscall.MSG_CMSG_CLOEXEC)
	if errno != 0 {
		return 0, 0, 0, errno
	}
	return int(r), int(msg.Controllen), int(msg.Flags), 0
}

type errString string

func (e errString) Error() string { return string(e) }

func wrap(step string, err error) error { return &confine.Error{Step: step, Err: err} }
