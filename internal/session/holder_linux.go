package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// holder names the process that has f's file open besides f itself ("" if none
// is found): who to close when a session is refused as open elsewhere.
func holder(f *os.File) string {
	want, err := f.Stat()
	if err != nil {
		return ""
	}
	self, own := os.Getpid(), strconv.Itoa(int(f.Fd()))
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			if pid == self && fd.Name() == own {
				continue
			}
			if fi, err := os.Stat(filepath.Join(p, "fd", fd.Name())); err == nil && os.SameFile(fi, want) {
				return fmt.Sprintf("pid %d, %s", pid, cmdline(p))
			}
		}
	}
	return ""
}

// cmdline is a process's command line, printable and short.
func cmdline(proc string) string {
	b, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == 0 || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, string(b)))
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	if s == "" {
		return "command unknown"
	}
	return "`" + s + "`"
}
