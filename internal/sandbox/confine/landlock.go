package confine

import (
	"syscall"
	"unsafe"
)

// Landlock through raw system calls: go-landlock links libpsx through cgo for
// its all-threads mode, which this package never uses (it restricts one
// thread), and the cgo link alone cost dsh 16 MiB of resident memory at idle.

const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446
	landlockRulesetVersion   = 1
	landlockRulePathBeneath  = 1
	oPath                    = 0x200000 // O_PATH, alike on amd64 and arm64
)

// Access rights, by the ABI version that introduced them.
const (
	fsExecute     = 1 << 0
	fsWriteFile   = 1 << 1
	fsReadFile    = 1 << 2
	fsReadDir     = 1 << 3
	fsRemoveDir   = 1 << 4
	fsRemoveFile  = 1 << 5
	fsMakeChar    = 1 << 6
	fsMakeDir     = 1 << 7
	fsMakeReg     = 1 << 8
	fsMakeSock    = 1 << 9
	fsMakeFifo    = 1 << 10
	fsMakeBlock   = 1 << 11
	fsMakeSym     = 1 << 12
	fsRefer       = 1 << 13 // ABI 2
	fsTruncate    = 1 << 14 // ABI 3
	fsIoctlDev    = 1 << 15 // ABI 5
	fsResolveUnix = 1 << 16 // ABI 9

	netBindTCP    = 1 << 0 // ABI 4
	netConnectTCP = 1 << 1
	netBindUDP    = 1 << 2 // ABI 10
	netSendUDP    = 1 << 3

	scopeAbstractUnix = 1 << 0 // ABI 6
	scopeSignal       = 1 << 1
)

const (
	fsRead  = fsExecute | fsReadFile | fsReadDir
	fsWrite = fsWriteFile | fsRemoveDir | fsRemoveFile | fsMakeChar | fsMakeDir | fsMakeReg |
		fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym
	// fsFile are the rights a rule on a file (not a directory) may carry.
	fsFile = fsExecute | fsReadFile | fsWriteFile | fsTruncate | fsIoctlDev
)

// Rights is what each Landlock ABI version can restrict.
func Rights(abi int) (fs, net, scoped uint64) {
	fs = fsRead | fsWrite
	if abi >= 2 {
		fs |= fsRefer
	}
	if abi >= 3 {
		fs |= fsTruncate
	}
	if abi >= 4 {
		net = netBindTCP | netConnectTCP
	}
	if abi >= 5 {
		fs |= fsIoctlDev
	}
	if abi >= 6 {
		scoped = scopeAbstractUnix | scopeSignal
	}
	if abi >= 9 {
		// Connecting to a pathname socket made outside the sandbox (a tmux or
		// docker socket) is an escape: no rule grants it. Older kernels need
		// the seccomp filter for that.
		fs |= fsResolveUnix
	}
	if abi >= 10 {
		net |= netBindUDP | netSendUDP
	}
	return fs, net, scoped
}

// ABI is the kernel's Landlock ABI version, 0 without Landlock.
func ABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

type rulesetAttr struct{ fs, net, scoped uint64 }

type pathBeneath struct {
	allowed uint64
	parent  int32
}

func (r Rules) landlock(abi int) error {
	if abi < 3 {
		return fail("landlock", syscall.ENOSYS)
	}
	fs, net, scoped := Rights(abi)
	attr := rulesetAttr{fs: fs, scoped: scoped}
	if !r.Network {
		attr.net = net // and no rule allows a port
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fail("landlock_create_ruleset", errno)
	}
	defer func() { _ = syscall.Close(int(fd)) }()
	const write = fsWrite | fsRefer | fsTruncate
	if err := addRule(int(fd), "/", fsRead&fs); err != nil {
		return err
	}
	for _, dir := range r.Write {
		if err := addRule(int(fd), dir, (fsRead|write)&fs); err != nil {
			return err
		}
	}
	for _, dev := range WritableDevices {
		if err := addRule(int(fd), dev, fsFile&fs); err != nil {
			return err
		}
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
		return fail("no_new_privs", errno)
	}
	if _, _, errno := syscall.RawSyscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fail("landlock_restrict_self", errno)
	}
	return nil
}

// addRule grants access beneath path; a path that does not exist is skipped
// (a cache not created yet), and a file gets only the rights a file can have.
func addRule(ruleset int, path string, access uint64) error {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err == syscall.ENOENT {
		return nil
	}
	if err != nil {
		return fail("sandbox rule for "+path, err)
	}
	defer func() { _ = syscall.Close(fd) }()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fail("sandbox rule for "+path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		access &= fsFile
	}
	rule := pathBeneath{allowed: access, parent: int32(fd)}
	_, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(ruleset), landlockRulePathBeneath,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
	if errno != 0 {
		return fail("sandbox rule for "+path, errno)
	}
	return nil
}
