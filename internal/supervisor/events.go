package supervisor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// events is what dsh waits on for a supervisor: its status pipe and, while
// Follow copies it, a command's output, both in an epoll instance of their
// own that the runtime's poller watches as one descriptor. One goroutine
// then learns of output and of the command's end from a single wake-up; with
// a goroutine per pipe each event would wake one, and the runtime another
// thread to run it.
//
// The reads are raw system calls on non-blocking descriptors: an ordinary
// one wakes the runtime's monitor thread when it sleeps.
type events struct {
	ep      *os.File // the epoll instance, polled by the runtime
	rc      syscall.RawConn
	status  int    // the status pipe's read end, non-blocking
	pending []byte // what was read of the status pipe past the last line
	eof     bool   // the status pipe has ended: the supervisor is gone
}

// newEvents returns a status pipe's events and the pipe's write end, for
// the supervisor.
func newEvents() (*events, *os.File, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("status pipe: %w", err)
	}
	w := os.NewFile(uintptr(p[1]), "status")
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err == nil {
		err = unix.SetNonblock(p[0], true)
	}
	if err == nil {
		err = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p[0])})
	}
	if err == nil {
		err = unix.SetNonblock(ep, true) // so that the runtime polls it
	}
	if err != nil {
		if ep >= 0 {
			_ = unix.Close(ep)
		}
		_ = unix.Close(p[0])
		_ = w.Close()
		return nil, nil, fmt.Errorf("status pipe: %w", err)
	}
	e := &events{ep: os.NewFile(uintptr(ep), "supervisor events"), status: p[0]}
	if e.rc, err = e.ep.SyscallConn(); err != nil {
		e.close()
		_ = w.Close()
		return nil, nil, fmt.Errorf("status pipe: %w", err)
	}
	return e, w, nil
}

func (e *events) close() {
	_ = e.ep.Close()
	_ = unix.Close(e.status)
}

// wait waits until a descriptor of the set is ready.
func (e *events) wait() error {
	return e.rc.Read(func(fd uintptr) bool {
		var ev [4]unix.EpollEvent
		n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
		return n > 0 || (errno != 0 && errno != unix.EINTR)
	})
}

// line returns the next line of the status pipe, its end included; with
// block false, "" when none has come yet. At the pipe's end it returns
// io.EOF.
func (e *events) line(block bool) (string, error) {
	for {
		if i := bytes.IndexByte(e.pending, '\n'); i >= 0 {
			l := string(e.pending[:i+1])
			e.pending = e.pending[i+1:]
			return l, nil
		}
		if e.eof {
			return "", io.EOF
		}
		var b [256]byte
		n, errno := rawRead(e.status, b[:])
		switch {
		case errno == unix.EINTR:
		case errno == unix.EAGAIN:
			if !block {
				return "", nil
			}
			if err := e.wait(); err != nil {
				return "", err
			}
		case errno != 0 || n == 0:
			e.eof = true
		default:
			e.pending = append(e.pending, b[:n]...)
		}
	}
}

// add and remove watch a command's output, or stop.
func (e *events) add(fd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	_, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(e.epfd()), unix.EPOLL_CTL_ADD, uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func (e *events) remove(fd int) {
	_, _, _ = unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(e.epfd()), unix.EPOLL_CTL_DEL, uintptr(fd), 0, 0, 0)
}

func (e *events) epfd() int {
	fd := -1
	_ = e.rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// pipeSize is the capacity of the pipe fd.
func pipeSize(fd int) int {
	n, _, errno := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if errno != 0 {
		return 1 << 20 // the most an unprivileged process may give a pipe, by default
	}
	return int(n)
}

func rawRead(fd int, b []byte) (int, syscall.Errno) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), errno
}

// Follow is Wait for a command whose output is a pipe that the caller reads:
// out is its read end, non-blocking and not polled by the runtime (nothing
// else reads it). Follow copies the output to w as it comes, with buf, and
// returns how the command ended once the command and everything it started
// are gone and what they wrote is read. A process out of dsh's reach that
// holds the pipe is not waited for: what it writes is not the command's.
// Call it instead of Wait.
func (p *Process) Follow(out *os.File, w io.Writer, buf []byte) Exit {
	fd := -1
	if rc, err := out.SyscallConn(); err == nil {
		_ = rc.Control(func(f uintptr) { fd = int(f) })
	}
	ev := p.sp.ev
	// Only an epoll out of memory refuses the pipe; its output is then read
	// once the command has ended, and one that fills it waits for its
	// timeout.
	watched := fd >= 0 && ev.add(fd) == nil
	open := fd >= 0
	size := 0
	if open {
		size = pipeSize(fd)
	}
	// drain reads what the pipe holds, at most its size, and says what is
	// left: nothing for now, more, or nothing ever (its end).
	const (
		empty = iota
		more
		ended
	)
	drain := func() int {
		for read := 0; read < size; {
			n, errno := rawRead(fd, buf[:min(len(buf), size-read)])
			switch {
			case n > 0:
				_, _ = w.Write(buf[:n])
				read += n
			case errno == unix.EINTR:
			case errno == unix.EAGAIN:
				return empty
			default: // its end, or nothing more to read
				return ended
			}
		}
		return more
	}
	var e Exit
	var ok, done bool // done: how the command ended is known
	for {
		left := empty
		if open && (watched || done) {
			if left = drain(); left == ended {
				open = false
				if watched {
					ev.remove(fd)
					watched = false
				}
			}
		}
		if done {
			// All that the command and what it started wrote was in the
			// pipe, which holds no more than its size; a process out of
			// reach may write on, and that is not the command's.
			break
		}
		// Once the supervisor has said how the command ended, the output is
		// read once more, for what was written before. It keeps the output
		// open until then, so that the output's end does not wake this first.
		if e, ok, done = p.sp.exit(false); done || left == more {
			continue // in a flood, the status is read between pipefuls
		}
		if err := ev.wait(); err != nil { // the poller failed: as if the supervisor had
			done = true
		}
	}
	if watched {
		ev.remove(fd)
	}
	return p.finish(e, ok)
}
