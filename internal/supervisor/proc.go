package supervisor

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procInfo is what /proc/<pid>/stat says of a process.
type procInfo struct {
	pid, ppid, pgid int
	zombie          bool
}

// processes lists every process in /proc. It reads one small file per process,
// about a millisecond for a few hundred, so it runs only when something must be
// killed.
func processes() []procInfo {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make([]procInfo, 0, len(stats))
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		out = append(out, procInfo{pid: pid, ppid: ppid, pgid: pgid, zombie: f[0] == "Z"})
	}
	return out
}

// descendants returns the live descendants of the roots, roots excluded.
func descendants(procs []procInfo, roots ...int) []int {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []int
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !c.zombie {
				out = append(out, c.pid)
			}
			queue = append(queue, c.pid)
		}
	}
	return out
}
