package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock is called through golang.org/x/sys/unix rather than go-landlock: that
// library links libpsx through cgo for its all-threads mode, which this package
// never uses (it restricts one thread, see RestrictThread), and the cgo link
// alone cost dsh 16 MiB of resident memory at idle.

// minABI is the Landlock version the sandbox needs: 3 is the first that also
// controls truncation, without which a command could empty any file it can
// open; the network needs 4.
const minABI, minNetworkABI = 3, 4

// The access rights by the ABI version that introduced them.
const (
	fsRead  = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsWrite = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsV1 = fsRead | fsWrite
	// fsFile are the rights a rule on a file (not a directory) may carry.
	fsFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// abiRights is what each Landlock ABI version can restrict.
func abiRights(abi int) (fs, net, scoped uint64) {
	fs = fsV1
	if abi >= 2 {
		fs |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		fs |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 4 {
		net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 5 {
		fs |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 6 {
		scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	if abi >= 9 {
		// Connecting to a pathname socket made outside the sandbox (a tmux or
		// docker socket) is an escape: no rule grants it.
		fs |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	if abi >= 10 {
		net |= unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
	}
	return fs, net, scoped
}

// kernelABI is the kernel's Landlock ABI version, 0 without Landlock.
func kernelABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Check reports whether this kernel can enforce mode: nil for Off and when it
// can, else an error that says what is missing.
func Check(mode Mode) error {
	if !mode.Enabled() {
		return nil
	}
	abi := kernelABI()
	if abi == 0 {
		return errors.New("the sandbox needs Landlock, which this kernel does not offer: it needs Linux 5.13 or later with landlock in its lsm= boot setting")
	}
	if abi < minABI {
		return fmt.Errorf("the sandbox needs Landlock ABI %d (Linux 6.2 or later); this kernel has ABI %d", minABI, abi)
	}
	if mode == NetworkOff && abi < minNetworkABI {
		return fmt.Errorf("--sandbox network-off needs Landlock ABI %d (Linux 6.7 or later); this kernel has ABI %d", minNetworkABI, abi)
	}
	return nil
}

// RestrictThread applies the policy to the calling OS thread, and so to every
// process it then starts. The caller must have locked the goroutine to its
// thread (runtime.LockOSThread) and must never unlock it: the restriction
// cannot be lifted, and the thread has to end with the goroutine.
func (p *Policy) RestrictThread() error {
	abi := kernelABI()
	mode := On
	if !p.Network {
		mode = NetworkOff
	}
	if err := Check(mode); err != nil {
		return err
	}
	fs, net, scoped := abiRights(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: fs, Scoped: scoped}
	if !p.Network {
		attr.Handled_access_net = net // and no rule allows a port
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer func() { _ = unix.Close(int(fd)) }()
	const write = fsWrite | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	if err := addRule(int(fd), "/", fsRead&fs); err != nil {
		return err
	}
	for _, dir := range p.Write {
		if err := addRule(int(fd), dir, (fsRead|write)&fs); err != nil {
			return err
		}
	}
	for _, dev := range writableDevices {
		if err := addRule(int(fd), dev, fsFile&fs); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// addRule grants access beneath path; a path that does not exist is skipped
// (a cache not created yet), and a file gets only the rights a file can have.
func addRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox rule for %s: %w", path, err)
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox rule for %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFile
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("sandbox rule for %s: %w", path, errno)
	}
	return nil
}
