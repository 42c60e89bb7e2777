package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/sandbox"
)

// unixAttack is the command's attacker (DSH_TEST_UNIX=path): it connects to a
// pathname socket and sends a payload.
func unixAttack(path string) {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_, err = c.Write([]byte("PAYLOAD\n"))
		_ = c.Close()
	}
	if err != nil {
		fmt.Printf("unix: refused (%v)\n", err)
	} else {
		fmt.Println("unix: done")
	}
}

// TestSandboxAsUser: dsh run by an ordinary user with --sandbox on. Its
// command cannot reach a unix socket served outside (a tmux server of the same
// user), change the mode of the user's own file outside the workspace, or
// write the workspace's AGENTS.md; it writes the rest of the workspace.
func TestSandboxAsUser(t *testing.T) {
	if err := sandbox.Check(sandbox.On); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
	exe := dsh(t)
	cred, home := nonRoot(t)
	dir := filepath.Dir(exe)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	attacker := filepath.Join(dir, "attacker")
	copyFile(t, self, attacker)
	ws := filepath.Join(dir, "sandbox-ws-"+strconv.Itoa(os.Getpid()))
	outside := filepath.Join(home, "outside")
	tmp := filepath.Join(home, "tmp") // so that /tmp, where the victim is, is not writable
	for _, d := range []string{ws, home, outside, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.RemoveAll(ws) })
	victim := filepath.Join(outside, "victim")
	agents := filepath.Join(ws, "AGENTS.md")
	for path, text := range map[string]string{victim: "x", agents: "be good\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(outside, "tmux.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var reached atomic.Bool
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 16)
			n, _ := c.Read(b)
			reached.Store(reached.Load() || bytes.HasPrefix(b[:n], []byte("PAYLOAD")))
			_ = c.Close()
		}
	}()
	if cred != nil {
		for _, p := range []string{ws, home, outside, tmp, victim, agents, sock} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := startTool(t, cred, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp}, ws, "--sandbox", "on")
	s.call(t, fmt.Sprintf(`echo "uid=$(id -u)"; DSH_TEST_UNIX=%s %s
chmod 777 %s; echo "chmod=$?"
echo evil > AGENTS.md; echo "agents=$?"
echo ok > inws; echo "inws=$?"`, sock, attacker, victim), false)
	_ = s.stdin.Close()
	s.wait(t, 60*time.Second)
	out := s.out.String()
	t.Logf("what the command saw:\n%s", out)
	for _, want := range []string{"uid=" + strconv.Itoa(int(uidOf(cred))), "unix: refused", "chmod=1", "agents=1", "inws=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if reached.Load() {
		t.Error("the payload reached the socket")
	}
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the victim's mode changed: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(agents); string(b) != "be good\n" {
		t.Errorf("AGENTS.md = %q", b)
	}
}
