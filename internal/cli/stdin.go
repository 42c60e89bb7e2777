package cli

import (
	"os"
	"strconv"
	"syscall"
)

// pollable returns a pipe f as a file read through the runtime's poller, so
// that a goroutine waiting for the next line parks instead of holding a
// thread in read(2) — which keeps the scheduler's monitor polling every few
// microseconds for as long as dsh waits (dsh tool -, dsh acp). The pipe is
// opened anew through /proc, so the non-blocking flag is this open file's
// alone and not that of the process that shares f. Anything else (a
// terminal, a file, no /proc) is returned as it is.
func pollable(f *os.File) *os.File {
	var st syscall.Stat_t
	if syscall.Fstat(int(f.Fd()), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return f
	}
	fd, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
