package control

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoFollow opens a directory without following a link in its last
// element, for *at calls and socket addresses only.
func openNoFollow(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// short is an address of the socket name in the directory d that fits in a
// socket address however long d's path is (a sun_path holds 108 bytes), and
// that cannot be redirected by renaming what is above d.
func short(d *os.File, name string) string { return fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), name) }

// listenAt binds and listens on a socket at name in d, which Close does not
// unlink (Server.Close unlinks it in d). Made with the system calls rather
// than net.ListenUnix, which first reads the largest backlog from
// /proc/sys/net/core/somaxconn (a file opened, a 64 KiB buffer): a fresh
// process pays that on its first session/new. The kernel caps SOMAXCONN at
// that value as it caps Go's.
func listenAt(d *os.File, name string) (*net.UnixListener, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer func() { _ = f.Close() }() // the listener has its own descriptor
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: short(d, name)}); err != nil {
		return nil, os.NewSyscallError("bind", err)
	}
	err = unix.Listen(fd, unix.SOMAXCONN)
	var l net.Listener
	if err == nil {
		l, err = net.FileListener(f)
	} else {
		err = os.NewSyscallError("listen", err)
	}
	if err != nil {
		_ = unlinkAt(d, name) // bound: the socket file is there
		return nil, err
	}
	return l.(*net.UnixListener), nil
}

func unlinkAt(d *os.File, name string) error { return unix.Unlinkat(int(d.Fd()), name, 0) }

func chmodAt(d *os.File, name string, mode uint32) error {
	return unix.Fchmodat(int(d.Fd()), name, mode, 0)
}

// lstatAt is the type of what is at name in d, not following a link.
func lstatAt(d *os.File, name string) (uint32, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return st.Mode & unix.S_IFMT, nil
}

const typeSocket = unix.S_IFSOCK

// peerUID is the user of the process at the other end of c (SO_PEERCRED).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, fmt.Errorf("peer credentials: %w", cerr)
	}
	return int(cred.Uid), nil
}
