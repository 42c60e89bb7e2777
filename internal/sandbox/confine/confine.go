// Package confine applies the sandbox to a command from inside its supervisor:
// a mount namespace in which only the write set is writable and the protected
// paths are read-only (Mount), then Landlock, no capabilities and a seccomp
// filter on the thread that starts the command (RestrictThread).
//
// It makes raw system calls through package syscall and imports nothing
// heavier: the supervisor runs from a package init before the rest of dsh
// initialises (see supervisor/child), and every package it imports must be
// initialised before it.
package confine

import (
	"syscall"
	"unsafe"
)

// Rules are what a confined command may change.
type Rules struct {
	// Write are the directories under which the command may create, change and
	// delete files.
	Write []string
	// Network is whether TCP connect and bind, and sockets other than TCP,
	// are allowed.
	Network bool
	// Protect are paths inside Write that stay read-only (see Mount).
	Protect []string
	// Hide are the user's secret files and folders, which the command may
	// not even read: each appears empty (see Mount).
	Hide []string
}

// WritableDevices are the device files commands may open for writing. The
// terminal (/dev/tty) is not one: a command must not type into dsh's.
var WritableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// Error is a failed step and why.
type Error struct {
	Step string
	Err  error
}

func (e *Error) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func fail(step string, err error) error { return &Error{step, err} }

// CloneFlags are the namespaces the supervisor of a confined command starts in:
// its own user namespace, in which it may mount, and its own mount namespace.
const CloneFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS

// The new mount API (Linux 5.12), numbered alike on every architecture.
const (
	sysMountSetattr   = 442
	atRecursive       = 0x8000
	mountAttrRdonly   = 0x1
	atFdcwd           = -100
	atSymlinkNofollow = 0x100
)

type mountAttr struct{ set, clr, propagation, usernsFD uint64 }

func setattr(path string, set, clr uint64, flags int) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	a := mountAttr{set: set, clr: clr}
	dirfd := atFdcwd
	_, _, errno := syscall.Syscall6(sysMountSetattr, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags|atSymlinkNofollow), uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// Mount makes, in the calling process's own mount namespace (see CloneFlags),
// every mount read-only but the write set, and binds each protected path that
// exists as a directory or regular file read-only over itself. Read-only mounts
// refuse what Landlock does not see — chmod, chown, utimes, xattrs — outside
// the write set. A protected path's parent inside the write set (.git) becomes
// a mount point too, which cannot be renamed or removed: a command cannot move
// .git aside and put a new .git/config in its place. Nothing here propagates to
// the rest of the system.
func (r Rules) Mount() error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fail("mount namespace", err)
	}
	if err := setattr("/", mountAttrRdonly, 0, atRecursive); err != nil {
		return fail("read-only mounts", err)
	}
	for _, w := range r.Write {
		if kind(w) != syscall.S_IFDIR {
			continue // nothing can create it now: it is under a read-only mount
		}
		if err := bind(w); err != nil {
			return fail("writable "+w, err)
		}
		if err := setattr(w, 0, mountAttrRdonly, atRecursive); err != nil {
			// A mount below that was read-only before is locked so: keep it.
			if err := setattr(w, 0, mountAttrRdonly, 0); err != nil {
				return fail("writable "+w, err)
			}
		}
	}
	held := map[string]bool{}
	for _, p := range r.Protect {
		k := kind(p)
		if k != syscall.S_IFDIR && k != syscall.S_IFREG {
			continue // absent, or a symbolic link (see the README)
		}
		if dir := parent(p); !held[dir] && !r.isWrite(dir) {
			held[dir] = true
			if err := bind(dir); err != nil {
				return fail("protect "+dir, err)
			}
		}
		if err := bind(p); err != nil {
			return fail("protect "+p, err)
		}
		if err := setattr(p, mountAttrRdonly, 0, atRecursive); err != nil {
			return fail("protect "+p, err)
		}
	}
	// Last, over whatever is writable or protected: an empty read-only
	// folder over each secret folder, the empty /dev/null over each file.
	for _, h := range r.Hide {
		var err error
		switch kind(h) {
		case syscall.S_IFDIR:
			err = syscall.Mount("tmpfs", h, "tmpfs", syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "size=4k,mode=0500")
		case syscall.S_IFREG:
			if err = syscall.Mount("/dev/null", h, "", syscall.MS_BIND, ""); err == nil {
				err = setattr(h, mountAttrRdonly, 0, 0)
			}
		default:
			continue // absent, or a link: the policy names real paths
		}
		if err != nil {
			return fail("hide "+h, err)
		}
	}
	// The working directory still refers to the mount below the new ones.
	wd, err := syscall.Getwd()
	if err == nil {
		err = syscall.Chdir(wd)
	}
	if err != nil {
		return fail("working directory", err)
	}
	return nil
}

func (r Rules) isWrite(dir string) bool {
	for _, w := range r.Write {
		if w == dir {
			return true
		}
	}
	return false
}

func bind(path string) error {
	return syscall.Mount(path, path, "", syscall.MS_BIND|syscall.MS_REC, "")
}

// kind is the file type at path, not following a final symbolic link; 0 if
// there is nothing.
func kind(path string) uint32 {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil {
		return 0
	}
	return st.Mode & syscall.S_IFMT
}

func parent(path string) string {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "/"
}

// RestrictThread confines the calling OS thread, and so every process it then
// starts: Landlock, no capabilities, no new privileges and the seccomp filter.
// The caller must have locked the goroutine to its thread and never unlock it.
// mounted says whether Mount ran: without it, chown and xattr changes are
// refused everywhere (see filter).
func (r Rules) RestrictThread(mounted bool) error {
	abi := ABI()
	if err := r.landlock(abi); err != nil {
		return err
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	prog := filter(r.Network, abi < 9, !mounted)
	fprog := struct {
		n    uint16
		_    [6]byte
		insn *insn
	}{n: uint16(len(prog)), insn: &prog[0]}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetSeccomp, seccompModeFilter, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fail("seccomp", errno)
	}
	return nil
}

const (
	prSetNoNewPrivs   = 38
	prSetSeccomp      = 22
	seccompModeFilter = 2
	prCapbsetDrop     = 24
	prCapAmbient      = 47
	prCapAmbientClear = 4
)

// dropCapabilities empties the thread's bounding, ambient, effective, permitted
// and inheritable sets: a root command keeps no privilege, and regains none at
// exec. Without CAP_SETPCAP (a non-root user outside a user namespace) the
// bounding set cannot shrink, but there is nothing to regain: no new privileges
// is set.
func dropCapabilities() error {
	for c := uintptr(0); c < 64; c++ {
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0)
		if errno == syscall.EINVAL {
			break // past the last capability
		}
		if errno != 0 && errno != syscall.EPERM {
			return fail("capability bounding set", errno)
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClear, 0, 0, 0, 0); errno != 0 && errno != syscall.EINVAL {
		return fail("ambient capabilities", errno)
	}
	hdr := struct {
		version uint32
		pid     int32
	}{version: 0x20080522} // _LINUX_CAPABILITY_VERSION_3
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return fail("capabilities", errno)
	}
	return nil
}

// IsolateNetwork moves the calling thread, and so what it then starts, into
// a network namespace of its own, where only loopback is up, and returns a
// socket listening on 127.0.0.1:port there: the only way out, which the
// caller hands to dsh's proxy outside. Nothing else routes anywhere, so a
// command cannot connect past the proxy, by name, address, port or UDP. The
// thread needs CAP_SYS_ADMIN and CAP_NET_ADMIN in its user namespace.
func IsolateNetwork(port int) (int, error) {
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		return -1, fail("network namespace", err)
	}
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fail("loopback", err)
	}
	ifr := struct {
		name  [16]byte
		flags uint16
		_     [22]byte
	}{flags: syscall.IFF_UP | syscall.IFF_LOOPBACK | syscall.IFF_RUNNING}
	copy(ifr.name[:], "lo")
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr)))
	_ = syscall.Close(s)
	if errno != 0 {
		return -1, fail("loopback", errno)
	}
	l, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fail("proxy socket", err)
	}
	if err = syscall.Bind(l, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err == nil {
		err = syscall.Listen(l, syscall.SOMAXCONN)
	}
	if err != nil {
		_ = syscall.Close(l)
		return -1, fail("proxy socket", err)
	}
	return l, nil
}
