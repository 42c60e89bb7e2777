package rpcfix

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the pipe buffer asked for dsh's output: a replay writes tens of
// megabytes, which through the default 64 KiB left the writer waiting on the
// reader after every batch.
const pipeSize = 1 << 20

// growPipe enlarges out's pipe buffer if out is a pipe. The kernel caps it
// (/proc/sys/fs/pipe-max-size) and may refuse: the default then stays.
func growPipe(out io.Writer) {
	f, ok := out.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
}
