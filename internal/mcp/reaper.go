package mcp

// A stdio server's own children are in its process group, but nothing kills
// that group when dsh is killed with SIGKILL: a parent-death signal reaches
// only the direct child. So each server runs under a reaper, this very binary
// re-executed (see init): it starts the server in its process group and, when
// dsh dies, kills the whole group, itself included.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// envReaper carries the server's command line to the reaper, which removes it.
const envReaper = "DSH_INTERNAL_MCP_REAPER"

type reaperConfig struct {
	Parent int      `json:"parent"`
	Path   string   `json:"path"`
	Args   []string `json:"args"`
}

func init() {
	if raw, ok := os.LookupEnv(envReaper); ok {
		os.Exit(reap(raw))
	}
}

// reaperCommand is the reaper's command for a server at path (resolved) with
// args, with env as the server's environment.
func reaperCommand(path string, args, env []string) (*exec.Cmd, error) {
	raw, err := json.Marshal(reaperConfig{Parent: os.Getpid(), Path: path, Args: args})
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{"dsh-mcp-reaper"},
		Env:  append(env, envReaper+"="+string(raw)),
		// Its own group, which the server and its children join and Close
		// kills; SIGHUP when dsh dies (see reap).
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP},
	}
	return cmd, nil
}

func reap(raw string) int {
	_ = os.Unsetenv(envReaper)
	var c reaperConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		fmt.Fprintln(os.Stderr, "dsh-mcp-reaper:", err)
		return 1
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM)
	if os.Getppid() != c.Parent {
		return 1 // dsh died before the parent-death signal was armed
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	// The parent-death signal follows the thread that forked this process;
	// polling the parent covers a signal that could not be armed in time.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			// What the server left in its group dies with it: dsh may be gone,
			// and nobody else would end it.
			killGroupButSelf()
			if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				return 128 + int(st.Signal())
			}
			return cmd.ProcessState.ExitCode()
		case <-sigs:
			if os.Getppid() == c.Parent {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				continue
			}
		case <-tick.C:
			if os.Getppid() == c.Parent {
				continue
			}
		}
		_ = syscall.Kill(0, syscall.SIGKILL) // the whole group, this process included
		return 1
	}
}

// killGroupButSelf kills every other process of this process's group.
func killGroupButSelf() {
	self, group := os.Getpid(), syscall.Getpgrp()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if len(fields) >= 3 && fields[2] == strconv.Itoa(group) && pid != self {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
