// Package supervisor runs a command so that nothing it starts outlives it or
// the process that started it. A command runs under a supervisor: the same
// binary re-executed, which becomes the supervisor before the rest of dsh
// initialises (package entry), a child subreaper with a parent-death signal
// that starts the command in a new session without a controlling terminal,
// optionally inside the sandbox, and kills every descendant, whether it stayed
// in the group or not (setsid, double fork), when the command ends, when it is
// terminated, and when the parent dies, even by SIGKILL. Start gives the
// command a supervisor of its own; a Session keeps one for a session's
// commands, one at a time, so that they do not pay a Go process's start.
//
// The process that calls Start becomes a child subreaper too: should a
// supervisor itself be killed (SIGKILL, or a command killing it), what it left
// is adopted by the caller, and Wait kills it.
package supervisor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/netproxy"
	"github.com/dsh-dev/dsh/internal/sandbox"
	"github.com/dsh-dev/dsh/internal/sandbox/confine"
	"github.com/dsh-dev/dsh/internal/supervisor/entry"
)

// Spec is a command to run supervised.
type Spec struct {
	Path string
	Args []string // Args[0] is the command's argv[0]
	Dir  string
	Env  []string // the command's whole environment
	// Output is the command's stdout, and its stderr unless Errors is set.
	Output *os.File
	// Errors, if set, is the command's stderr.
	Errors *os.File
	// Input, if set, is the command's stdin; else it is /dev/null.
	Input *os.File
	// Extra, if set, is the command's fd 3.
	Extra *os.File
	// Sandbox, if set, confines the command (not the supervisor).
	Sandbox *sandbox.Policy
	// Grace is how long a terminated command has between SIGTERM and SIGKILL.
	Grace time.Duration
	// Drain is how long descendants may outlive the command before they are
	// leftovers and are killed.
	Drain time.Duration
	// Handoff has Start close Output, Errors, Input and Extra once they are
	// sent to the supervisor, which holds them from then on: while dsh
	// waits for the command to start, it makes no system call that would
	// wake the runtime. The caller's Close after that does nothing; on an
	// error it closes them.
	Handoff bool
}

// Process is a supervised command.
type Process struct {
	// Pgid is the command's process group, and its pid.
	Pgid int

	sp      *spare   // its supervisor
	session *Session // the supervisor's, if it stays for the next command
	proxy   *netproxy.Session
}

// Exit is how a supervised command ended.
type Exit struct {
	Status syscall.WaitStatus
	// Leftovers is whether descendants outlived the command and were killed.
	Leftovers bool
	// Refused are the hosts the sandbox's proxy refused the command (see
	// sandbox.Policy.Proxy).
	Refused []string
}

var (
	subreaper sync.Once
	// live are the supervisors running: the sweep must not take them for orphans.
	live   = map[int]bool{}
	liveMu sync.Mutex
)

// spares are supervisors started ahead, ready for the next command, one per
// kind (sandboxed, in its own namespaces, or not): a command then costs its
// fork and exec, and the next supervisor starts while it runs.
var spares struct {
	sync.Mutex
	idle     map[bool]*spare
	starting map[bool]bool
}

type spare struct {
	cmd     *exec.Cmd
	ev      *events // its status pipe
	control *os.File
	mounted bool // in its own user and mount namespaces
}

// newSpare starts a supervisor that waits for its command.
func newSpare(sandboxed bool) (*spare, error) {
	subreaper.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor socket: %w", err)
	}
	control, theirs := os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control")
	defer func() { _ = theirs.Close() }()
	ev, stW, err := newEvents()
	if err != nil {
		_ = control.Close()
		return nil, err
	}
	defer func() { _ = stW.Close() }()
	// One P: the supervisor does little at a time, and every idle P it had
	// would be woken, a thread switch, whenever a goroutine becomes runnable.
	env := []string{entry.EnvParent + "=" + strconv.Itoa(os.Getpid()), "GOMAXPROCS=1"}
	if raceBuild {
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	// Its own session keeps it out of the terminal (Ctrl-C, and a command
	// could reach a terminal through it); SIGHUP at the parent's death makes it
	// kill everything (see entry.watch).
	plain := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGHUP}
	start := func(attr *syscall.SysProcAttr) (*exec.Cmd, error) {
		cmd := &exec.Cmd{
			Path:        "/proc/self/exe", // this very binary, even if replaced on disk since
			Args:        []string{"dsh-supervisor"},
			Env:         env,
			ExtraFiles:  []*os.File{stW, theirs},
			SysProcAttr: attr,
		}
		liveMu.Lock()
		defer liveMu.Unlock()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		live[cmd.Process.Pid] = true
		return cmd, nil
	}
	sp := &spare{ev: ev, control: control}
	if sandboxed {
		// In its own user and mount namespaces, the supervisor mounts what the
		// command may not change read-only (confine.Rules.Mount). The
		// namespace is mapped once the supervisor runs (see ready).
		ns := *plain
		ns.Cloneflags = confine.CloneFlags
		// What it needs of the namespace's capabilities past exec: to mount,
		// to make the command a network namespace with loopback up, and to
		// empty the command's bounding set.
		ns.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
		sp.cmd, err = start(&ns)
		sp.mounted = err == nil
	}
	if sp.cmd == nil {
		// No user namespaces here: Landlock and seccomp alone (see the README).
		sp.cmd, err = start(plain)
	}
	if err != nil {
		_ = control.Close()
		ev.close()
		return nil, err
	}
	return sp, nil
}

// ready waits until the supervisor runs, and maps its user namespace to this
// user: dsh makes itself non-dumpable, which keeps a non-root dsh from writing
// a child's maps before the child has run exec (Go's UidMappings would).
func (sp *spare) ready() error {
	if line, _ := sp.ev.line(true); line != "ready\n" {
		return fmt.Errorf("the supervisor did not start (%q)", line)
	}
	if !sp.mounted {
		return nil
	}
	proc := "/proc/" + strconv.Itoa(sp.cmd.Process.Pid) + "/"
	for _, m := range []struct{ file, text string }{
		{"setgroups", "deny"},
		{"uid_map", fmt.Sprintf("%d %d 1", os.Getuid(), os.Getuid())},
		{"gid_map", fmt.Sprintf("%d %d 1", os.Getgid(), os.Getgid())},
	} {
		if err := os.WriteFile(proc+m.file, []byte(m.text), 0); err != nil {
			return fmt.Errorf("the sandbox's user namespace: %w", err)
		}
	}
	return nil
}

// discard ends a spare that will not be used.
func (sp *spare) discard() {
	_ = sp.control.Close()
	_ = sp.cmd.Process.Kill()
	_ = sp.cmd.Wait()
	sp.ev.close()
	liveMu.Lock()
	delete(live, sp.cmd.Process.Pid)
	liveMu.Unlock()
}

// takeSpare returns the idle supervisor of the kind, or a new one, and has
// another started for the next command.
func takeSpare(sandboxed bool) (*spare, error) {
	spares.Lock()
	sp := spares.idle[sandboxed]
	delete(spares.idle, sandboxed)
	refill := !spares.starting[sandboxed]
	if refill {
		if spares.starting == nil {
			spares.starting, spares.idle = map[bool]bool{}, map[bool]*spare{}
		}
		spares.starting[sandboxed] = true
	}
	spares.Unlock()
	if refill {
		go func() {
			next, err := newSpare(sandboxed)
			spares.Lock()
			defer spares.Unlock()
			spares.starting[sandboxed] = false
			if err == nil {
				spares.idle[sandboxed] = next
			}
		}()
	}
	if sp != nil {
		return sp, nil
	}
	return newSpare(sandboxed)
}

// Start starts the command under a supervisor of its own and returns once the
// command runs, or with the reason it could not start.
func Start(s Spec) (*Process, error) {
	sp, err := takeSpare(s.Sandbox != nil)
	if err != nil {
		return nil, err
	}
	if err := sp.ready(); err != nil {
		sp.discard()
		if !sp.mounted {
			return nil, err
		}
		// No user namespace after all: Landlock and seccomp alone.
		if sp, err = newSpare(false); err == nil {
			err = sp.ready()
		}
		if err != nil {
			return nil, err
		}
	}
	filtered := s.Sandbox != nil && s.Sandbox.Proxy != nil
	if filtered && !sp.mounted {
		sp.discard()
		return nil, errors.New("the sandbox cannot filter the network by domain here: it needs user namespaces, which this system does not allow (set no network.allowed_domains or denied_domains, or use --sandbox network-off)")
	}
	err = sp.send(s, false)
	p := &Process{sp: sp}
	if err == nil && filtered {
		p.proxy, err = sp.proxy(s.Sandbox.Proxy)
	}
	if err != nil {
		_ = sp.control.Close() // a supervisor that got nothing ends
		p.Wait()
		return nil, err
	}
	p.Pgid, err = sp.started()
	// Closed once the supervisor has taken its command, not right after the
	// send: Linux (6.18) can show the supervisor's first recvmsg the
	// socket's end before the message sent ahead of it, about once in a few
	// thousand starts, and the command is then never started.
	_ = sp.control.Close()
	if err == nil && filtered && p.proxy == nil {
		err = errors.New("the supervisor started the command without its network")
	}
	if err != nil {
		p.Wait()
		if errors.Is(err, errGone) {
			return nil, fmt.Errorf("%w (%s)", err, sp.cmd.ProcessState)
		}
		return nil, err
	}
	return p, nil
}

// send sends the supervisor the command to run; stay keeps the supervisor for
// the next.
func (sp *spare) send(s Spec, stay bool) error {
	c := entry.Config{Path: s.Path, Args: s.Args, Dir: s.Dir, Env: s.Env, Grace: s.Grace, Drain: s.Drain,
		Mounted: sp.mounted, Stay: stay}
	if s.Sandbox != nil {
		c.Sandbox = &confine.Rules{Write: s.Sandbox.Write, Network: s.Sandbox.Network, Protect: s.Sandbox.Protect, Hide: s.Sandbox.Hide}
		c.Env = override(c.Env, s.Sandbox.Env)
		if s.Sandbox.Proxy != nil {
			c.ProxyPort = netproxy.Port
		}
	}
	// In the order the supervisor takes them (entry.Config.Extra).
	files := []int{int(s.Output.Fd())}
	for _, f := range []struct {
		file *os.File
		flag *bool
	}{{s.Extra, &c.Extra}, {s.Input, &c.Input}, {s.Errors, &c.Errors}} {
		if f.file != nil {
			files = append(files, int(f.file.Fd()))
			*f.flag = true
		}
	}
	msg := c.Encode()
	if len(msg) > entry.MaxConfig {
		return errors.New("the command and its environment are too large")
	}
	err := unix.Sendmsg(int(sp.control.Fd()), []byte(msg), unix.UnixRights(files...), nil, 0)
	runtime.KeepAlive(s.Output)
	runtime.KeepAlive(s.Extra)
	runtime.KeepAlive(s.Input)
	runtime.KeepAlive(s.Errors)
	if err != nil {
		return fmt.Errorf("supervisor config: %w", err)
	}
	if s.Handoff {
		for _, f := range []*os.File{s.Output, s.Extra, s.Input, s.Errors} {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	return nil
}

// proxy receives the socket the supervisor listens on for the command's
// network (entry.Config.ProxyPort) and serves p on it; nil when the supervisor
// ended first (started says why).
func (sp *spare) proxy(p *netproxy.Proxy) (*netproxy.Session, error) {
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sp.control.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		fds, _ = unix.ParseUnixRights(&msgs[0])
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, errors.New("the sandbox's network: the supervisor sent no socket")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy")
	l, err := net.FileListener(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	return p.Serve(l), nil
}

// override is env with vars laid over it: a variable set in both keeps only
// vars' value (a program reads the first of two, a shell the last).
func override(env, vars []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.ContainsFunc(vars, func(v string) bool { return strings.HasPrefix(v, name+"=") })
	})
	return append(out, vars...)
}

// errGone is a supervisor that ended before it started the command.
var errGone = errors.New("the supervisor ended before it started the command")

// contEvery is how long dsh waits for a supervisor's word before it
// continues it, in case it was stopped.
const contEvery = time.Second

// started reads whether the command started: its pid, which is its process
// group, or why not.
func (sp *spare) started() (int, error) {
	// A command can stop its supervisor (kill -STOP $PPID) before it says it
	// started it, which left dsh waiting for ever: a supervisor that has not
	// answered in a while is continued, as often as needed.
	var mu sync.Mutex
	done := false
	var cont *time.Timer
	mu.Lock()
	cont = time.AfterFunc(contEvery, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			_ = sp.cmd.Process.Signal(syscall.SIGCONT)
			cont.Reset(contEvery)
		}
	})
	mu.Unlock()
	defer func() {
		mu.Lock()
		done = true
		cont.Stop()
		mu.Unlock()
	}()
	line, _ := sp.ev.line(true)
	line = strings.TrimSpace(line)
	if pid, ok := strings.CutPrefix(line, "started "); ok {
		if n, err := strconv.Atoi(pid); err == nil {
			return n, nil
		}
	}
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, errors.New(msg)
	}
	return 0, errGone
}

// exit reads how the command ended, waiting for it if block; got is false
// when it has not come yet, ok false when the supervisor died before it
// could say.
func (sp *spare) exit(block bool) (e Exit, ok, got bool) {
	line, err := sp.ev.line(block)
	if err == nil && line == "" {
		return Exit{}, false, false
	}
	rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "exit ")
	status, leftovers, _ := strings.Cut(rest, " ")
	ws, err := strconv.ParseUint(status, 10, 32)
	if !ok || err != nil || (leftovers != "true" && leftovers != "false") {
		return Exit{}, false, true
	}
	return Exit{Status: syscall.WaitStatus(ws), Leftovers: leftovers == "true"}, true, true
}

// end waits for the supervisor process, which has ended or is ending.
func (sp *spare) end() {
	_ = sp.control.Close() // a session's supervisor ends with its socket
	_ = sp.cmd.Wait()
	sp.ev.close()
	liveMu.Lock()
	delete(live, sp.cmd.Process.Pid)
	liveMu.Unlock()
}

// Wait waits until the command and everything it started are gone, and says how
// the command ended. Call it once.
func (p *Process) Wait() Exit {
	e, ok, _ := p.sp.exit(true)
	return p.finish(e, ok)
}

// finish is the end of Wait, once the supervisor said how the command ended
// (ok) or died.
func (p *Process) finish(e Exit, ok bool) Exit {
	if p.proxy != nil {
		e.Refused = p.proxy.Close() // the command and all it started are gone
	}
	if p.session != nil {
		ok = p.session.done(p, ok)
	} else {
		p.sp.end()
	}
	if ok {
		return e
	}
	// The supervisor was killed before it could clean up: the command has its
	// parent-death signal, and what else is left was adopted by this process.
	if p.Pgid > 0 {
		_ = unix.Kill(-p.Pgid, unix.SIGKILL)
	}
	e.Leftovers = sweep(p.Pgid)
	e.Status, _ = p.sp.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return e
}

// Terminate asks the supervisor to end the command: SIGTERM to the command and
// every descendant, SIGKILL after the grace time. It does not wait.
func (p *Process) Terminate() {
	if p.session != nil {
		p.session.terminate(p)
		return
	}
	_ = p.sp.cmd.Process.Signal(syscall.SIGCONT) // in case the command stopped it
	_ = p.sp.cmd.Process.Signal(syscall.SIGTERM)
}

// Kill kills the supervisor and the command's group at once; Wait then kills
// the rest. It is the last resort when the supervisor does not answer.
func (p *Process) Kill() {
	if p.session != nil && !p.session.running(p) {
		return // its supervisor has moved on to another command
	}
	_ = p.sp.cmd.Process.Kill()
	_ = unix.Kill(-p.Pgid, unix.SIGKILL)
}

// Session runs a session's commands one at a time under one supervisor that
// stays, so that a command costs its own fork and exec and a round trip: a
// supervisor of its own costs a Go process's start (several times a short
// command's cost). A command that comes while another runs, or that is
// sandboxed (its mounts and restrictions cannot be undone), gets a supervisor
// of its own. Its zero value is ready; Close ends the supervisor.
type Session struct {
	mu     sync.Mutex
	sp     *spare   // nil until the first command, and once it died
	cur    *Process // the command it runs
	closed bool
}

// Start is the package's Start, under the session's supervisor when it is free.
func (s *Session) Start(spec Spec) (*Process, error) {
	if spec.Sandbox != nil {
		return Start(spec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.cur != nil {
		return Start(spec)
	}
	if s.sp == nil {
		sp, err := takeSpare(false)
		if err == nil {
			if err = sp.ready(); err != nil {
				sp.discard()
			}
		}
		if err != nil {
			return nil, err
		}
		s.sp = sp
	}
	sp := s.sp
	err := sp.send(spec, true)
	sent := err == nil
	var pgid int
	if err == nil {
		pgid, err = sp.started()
	}
	switch {
	case err == nil:
		s.cur = &Process{Pgid: pgid, sp: sp, session: s}
		return s.cur, nil
	case errors.Is(err, errGone) || errors.Is(err, unix.EPIPE):
		// It died between commands (killed from outside): the next command
		// gets a new one, this one its own, unless it took the command's
		// descriptors with it.
		s.sp = nil
		sp.end()
		if sent && spec.Handoff {
			return nil, err
		}
		return Start(spec)
	}
	return nil, err // the command could not start; the supervisor waits for the next
}

// done is told that p's supervisor said how p ended (ok), or died; it reports
// whether the supervisor cleaned up after p.
func (s *Session) done(p *Process, ok bool) bool {
	s.mu.Lock()
	s.cur = nil
	retire := !ok || s.closed
	if retire && s.sp == p.sp {
		s.sp = nil
	}
	s.mu.Unlock()
	if retire {
		p.sp.end()
	}
	return ok
}

func (s *Session) running(p *Process) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur == p
}

// terminate sends Terminate, while p runs: the supervisor takes the messages
// in order, so one sent for p never ends the next command.
func (s *Session) terminate(p *Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != p {
		return
	}
	_ = p.sp.cmd.Process.Signal(syscall.SIGCONT) // in case the command stopped it
	_ = unix.Sendmsg(int(p.sp.control.Fd()), []byte(entry.Terminate), nil, nil, unix.MSG_DONTWAIT)
}

// Close ends the session's supervisor; a command still running is killed
// with it (end the commands first to give them their grace). Commands
// started later get supervisors of their own.
func (s *Session) Close() {
	s.mu.Lock()
	s.closed = true
	sp := s.sp
	if s.cur != nil {
		sp = nil
		_ = s.sp.control.Close() // the supervisor kills the command and ends; Wait reaps it
	}
	s.sp = nil
	s.mu.Unlock()
	if sp != nil {
		sp.end()
	}
}

// sweep kills and reaps the orphans this process adopted as a subreaper: its
// children outside its own process group that are not supervisors. It reports
// whether there were any besides the command cmd.
func sweep(cmd int) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	self, group := os.Getpid(), unix.Getpgrp()
	found := false
	for range 100 { // each round reaps a generation; killed processes cannot fork
		procs := entry.Processes()
		var orphans []int
		for _, p := range procs {
			if p.Ppid == self && p.Pgid != group && !live[p.Pid] {
				orphans = append(orphans, p.Pid)
			}
		}
		if len(orphans) == 0 {
			return found
		}
		found = found || len(orphans) > 1 || orphans[0] != cmd
		for _, pid := range append(entry.Descendants(procs, orphans...), orphans...) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range orphans {
			_, _ = unix.Wait4(pid, nil, 0, nil)
		}
	}
	return found
}
