package confine

import "syscall"

// The seccomp filter's view of this architecture.
const (
	auditArch   = 0xc00000b7 // AUDIT_ARCH_AARCH64
	x32Bit      = 0          // no second system call table
	sysSendmmsg = 269
)

// metadataCalls change owners and extended attributes.
var metadataCalls = []uint32{
	syscall.SYS_FCHOWN, syscall.SYS_FCHOWNAT,
	syscall.SYS_SETXATTR, syscall.SYS_LSETXATTR, syscall.SYS_FSETXATTR,
	syscall.SYS_REMOVEXATTR, syscall.SYS_LREMOVEXATTR, syscall.SYS_FREMOVEXATTR,
	sysSetxattrat, sysRemovexattr,
}
