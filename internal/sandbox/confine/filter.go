package confine

import "syscall"

// The seccomp filter refuses, on the command's thread and in everything it
// starts, what Landlock cannot see on this kernel:
//   - creating unix sockets, before Landlock ABI 9 (pathname sockets made
//     outside the sandbox — tmux, docker, D-Bus, ssh-agent — would run
//     anything; socketpair stays allowed);
//   - with the network off, every socket but TCP (Landlock's part), unix and
//     netlink ones: no UDP (DNS exfiltration), ICMP, raw, packet or vsock, and
//     TCP Fast Open, which connects from sendto;
//   - io_uring, whose operations no filter sees;
//   - without the mount namespace (see Mount), chown and xattr changes.
//
// It is a small program rather than a library's: the supervisor must not pull
// in packages that initialise before it (see the package comment).

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	ldAbs   = 0x20 // BPF_LD|BPF_W|BPF_ABS
	jeq     = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
	jge     = 0x35 // BPF_JMP|BPF_JGE|BPF_K
	jset    = 0x45 // BPF_JMP|BPF_JSET|BPF_K
	andK    = 0x54 // BPF_ALU|BPF_AND|BPF_K
	ret     = 0x06 // BPF_RET|BPF_K
	allow   = 0x7fff0000
	retErrn = 0x00050000

	offNr   = 0
	offArch = 4
	offArgs = 16 // the low half of each 8-byte argument (little endian)

	sysIoUringSetup = 425
	sysSetxattrat   = 463
	sysRemovexattr  = 466 // removexattrat

	afUnix, afInet, afInet6, afNetlink = 1, 2, 10, 16
	sockStream, sockTypeMask           = 1, 0xf
	ipprotoTCP                         = 6
	msgFastopen                        = 0x20000000
)

func errno(e syscall.Errno) uint32 { return retErrn | uint32(e) }

// asm is a BPF program under construction: jumps name labels, resolved at the end.
type asm struct {
	prog   []insn
	labels map[string]int
	fixes  []fix
}

type fix struct {
	at     int
	jt, jf string
}

func (a *asm) label(name string) { a.labels[name] = len(a.prog) }

func (a *asm) op(code uint16, k uint32) { a.prog = append(a.prog, insn{code: code, k: k}) }

// jump is a conditional jump; "" falls through.
func (a *asm) jump(code uint16, k uint32, jt, jf string) {
	a.fixes = append(a.fixes, fix{len(a.prog), jt, jf})
	a.op(code, k)
}

func (a *asm) arg(n int) { a.op(ldAbs, uint32(offArgs+8*n)) }

func (a *asm) done() []insn {
	for _, f := range a.fixes {
		for _, j := range []struct {
			label string
			to    *uint8
		}{{f.jt, &a.prog[f.at].jt}, {f.jf, &a.prog[f.at].jf}} {
			if j.label != "" {
				*j.to = uint8(a.labels[j.label] - f.at - 1)
			}
		}
	}
	return a.prog
}

func filter(network, denyUnix, denyMetadata bool) []insn {
	a := &asm{labels: map[string]int{}}
	a.op(ldAbs, offArch)
	a.jump(jeq, auditArch, "native", "")
	a.op(ret, errno(syscall.ENOSYS)) // another architecture's system calls (int 0x80)
	a.label("native")
	a.op(ldAbs, offNr)
	if x32Bit != 0 {
		a.jump(jge, x32Bit, "enosys", "")
	}
	a.jump(jeq, sysIoUringSetup, "enosys", "")
	a.jump(jeq, syscall.SYS_SOCKET, "socket", "")
	if !network {
		a.jump(jeq, syscall.SYS_SENDTO, "flags3", "")
		a.jump(jeq, sysSendmmsg, "flags3", "")
		a.jump(jeq, syscall.SYS_SENDMSG, "flags2", "")
	}
	if denyMetadata {
		for _, nr := range metadataCalls {
			a.jump(jeq, nr, "eperm", "")
		}
	}
	a.op(ret, allow)

	a.label("socket")
	a.arg(0)
	if denyUnix {
		a.jump(jeq, afUnix, "eacces", "")
	}
	if network {
		a.op(ret, allow)
	} else {
		a.jump(jeq, afUnix, "allow", "")
		a.jump(jeq, afNetlink, "allow", "")
		a.jump(jeq, afInet, "inet", "")
		a.jump(jeq, afInet6, "inet", "eacces")
		a.label("inet")
		a.arg(1)
		a.op(andK, sockTypeMask)
		a.jump(jeq, sockStream, "", "eacces")
		a.arg(2)
		a.jump(jeq, 0, "allow", "")
		a.jump(jeq, ipprotoTCP, "allow", "eacces")

		a.label("flags3")
		a.arg(3)
		a.jump(jset, msgFastopen, "eacces", "allow")
		a.label("flags2")
		a.arg(2)
		a.jump(jset, msgFastopen, "eacces", "allow")
	}
	a.label("allow")
	a.op(ret, allow)
	a.label("eacces")
	a.op(ret, errno(syscall.EACCES))
	a.label("eperm")
	a.op(ret, errno(syscall.EPERM))
	a.label("enosys")
	a.op(ret, errno(syscall.ENOSYS))
	return a.done()
}
