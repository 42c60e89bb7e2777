package confine

import "syscall"

// The seccomp filter's view of this architecture.
const (
	auditArch   = 0xc000003e // AUDIT_ARCH_X86_64
	x32Bit      = 0x40000000 // x32 system calls carry this bit: refused, so that they cannot bypass the filter
	sysSendmmsg = 307
)

// metadataCalls change owners and extended attributes.
var metadataCalls = []uint32{
	syscall.SYS_CHOWN, syscall.SYS_FCHOWN, syscall.SYS_LCHOWN, syscall.SYS_FCHOWNAT,
	syscall.SYS_SETXATTR, syscall.SYS_LSETXATTR, syscall.SYS_FSETXATTR,
	syscall.SYS_REMOVEXATTR, syscall.SYS_LREMOVEXATTR, syscall.SYS_FREMOVEXATTR,
	sysSetxattrat, sysRemovexattr,
}
