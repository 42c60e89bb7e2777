package checkpoint

import (
	"syscall"
	"unsafe"
)

// idle makes process pid run only when nothing else wants the CPU
// (SCHED_IDLE), or, where that is refused, at a low priority.
func idle(pid int) {
	param := struct{ priority int32 }{}
	const schedIdle = 5
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(pid), schedIdle, uintptr(unsafe.Pointer(&param))); e != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, niceness)
	}
}
