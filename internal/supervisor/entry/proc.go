package entry

import "os"

// Proc is what /proc/<pid>/stat says of a process.
type Proc struct {
	Pid, Ppid, Pgid int
	Zombie          bool
}

// Processes lists every process in /proc. It reads one small file per process,
// about a millisecond for a few hundred, so it runs only when something must be
// killed.
func Processes() []Proc {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	_ = dir.Close()
	out := make([]Proc, 0, len(names))
	for _, name := range names {
		pid, ok := atoi(name)
		if !ok {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := len(b) - 1
		for i >= 0 && b[i] != ')' {
			i--
		}
		if i < 0 {
			continue
		}
		f := fields(string(b[i+1:]), 3)
		if len(f) < 3 {
			continue
		}
		ppid, _ := atoi(f[1])
		pgid, _ := atoi(f[2])
		out = append(out, Proc{Pid: pid, Ppid: ppid, Pgid: pgid, Zombie: f[0] == "Z"})
	}
	return out
}

// Descendants returns the live descendants of the roots, roots excluded.
func Descendants(procs []Proc, roots ...int) []int {
	children := map[int][]Proc{}
	for _, p := range procs {
		children[p.Ppid] = append(children[p.Ppid], p)
	}
	var out []int
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !c.Zombie {
				out = append(out, c.Pid)
			}
			queue = append(queue, c.Pid)
		}
	}
	return out
}

// fields returns the first n space-separated fields of s.
func fields(s string, n int) []string {
	var out []string
	for len(out) < n {
		for len(s) > 0 && s[0] == ' ' {
			s = s[1:]
		}
		if s == "" {
			break
		}
		j := 0
		for j < len(s) && s[j] != ' ' {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}
