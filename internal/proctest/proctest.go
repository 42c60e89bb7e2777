// Package proctest helps tests prove that no process is left behind.
package proctest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// GroupGone waits until no process of the group is alive and fails the test if
// one still is after a generous wait. A killed process stays a zombie until its
// new parent (pid 1 here) reaps it, which may take a while, so zombies count as
// gone; the wait covers the delivery of the kill, not a speed requirement.
func GroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		live := LiveMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live processes %v", pgid, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LiveMembers lists the pids of the group's processes that are not zombies.
func LiveMembers(pgid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var live []string
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
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) >= 3 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			live = append(live, filepath.Base(filepath.Dir(path)))
		}
	}
	return live
}
