package fs

import (
	"os"
	"syscall"
)

// fileCTime is the file's status change time in Unix nanoseconds, which (unlike
// the modification time) no one can set back.
func fileCTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
