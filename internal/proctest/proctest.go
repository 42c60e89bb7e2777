// Package proctest helps tests prove that no process is left behind. Only
// tests import it (deadcode -test counts it live).
package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// Marker returns an argument for sleep that no other process has: a command
// runs `sleep MARKER` and the test asks whether any process with it is left.
func Marker() string {
	n := markerSeq.Add(1)
	return fmt.Sprintf("%d.%d%06d", 1000+n, os.Getpid(), n)
}

var markerSeq atomic.Int64

// Running lists the live (not zombie) processes whose command line holds marker.
func Running(marker string) []int {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, path := range cmdlines {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		dir := filepath.Dir(path)
		if st, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 && bytes.HasPrefix(bytes.TrimSpace(st[i+1:]), []byte("Z")) {
				continue
			}
		}
		if pid, err := strconv.Atoi(filepath.Base(dir)); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// NoneRunning waits until no live process holds marker, and fails the test if
// one still does after a generous wait (see GroupGone). It kills what it finds
// then, so that a failing test leaves nothing behind either.
func NoneRunning(t testing.TB, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := Running(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v with %q are still running", pids, marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitRunning waits until n processes hold marker: the command under test has
// started them.
func WaitRunning(t testing.TB, marker string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(Running(marker)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes with %q never started (have %v)", n, marker, Running(marker))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
