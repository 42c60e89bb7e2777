package mcp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// TestHintsNeedTrust: a server's readOnlyHint is believed only for a server
// the user trusts; an untrusted server's "read-only" tool asks like any other.
func TestHintsNeedTrust(t *testing.T) {
	untrusted, trusted := stdioConfig(t, "plain"), stdioConfig(t, "vouched")
	trusted.Trusted = true
	s := start(t, []ServerConfig{untrusted, trusted}, Options{})
	if g := find(t, s, "mcp__plain__greet"); g.Permission() != tool.PermExecute || g.ReadOnly() {
		t.Errorf("an untrusted server's readOnlyHint was believed: permission %v, read-only %v", g.Permission(), g.ReadOnly())
	}
	if g := find(t, s, "mcp__vouched__greet"); g.Permission() != tool.PermNone || !g.ReadOnly() {
		t.Errorf("a trusted server's readOnlyHint was ignored: permission %v", g.Permission())
	}
}

// TestServerNamesCollide: servers "x.y" and "x_y" give tools whose names
// sanitise alike; both are offered, under distinct names, and a registry of
// them (as every session builds) does not panic.
func TestServerNamesCollide(t *testing.T) {
	s := start(t, []ServerConfig{stdioConfig(t, "x.y"), stdioConfig(t, "x_y")}, Options{})
	ts := s.Tools()
	seen := map[string]bool{}
	for _, tl := range ts {
		if seen[tl.Name()] {
			t.Errorf("duplicate tool %s", tl.Name())
		}
		seen[tl.Name()] = true
	}
	toolset.New(toolset.Options{Extra: ts}) // panicked on a duplicate before
	n := 0
	for _, tl := range ts {
		if strings.HasPrefix(tl.Name(), "mcp__x_y__greet") {
			n++
			if r := run(t, tl, `{"name":"a"}`); r.IsError {
				t.Errorf("%s: %+v", tl.Name(), r)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d greet tools, want one per server", n)
	}
}

// TestServersDieWithDsh: after kill -9 of the process that started a server,
// the server and the children it started, also one in a session of its own,
// are gone.
func TestServersDieWithDsh(t *testing.T) {
	if os.Getenv("DSH_MCP_TEST_PARENT") == "1" {
		return // see parentProcess
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mark := proctest.Marker()
	cmd := exec.Command(exe, "-test.run=^TestParentProcess$")
	cmd.Env = append(os.Environ(), "DSH_MCP_TEST_PARENT=1", "DSH_MCP_TEST_MARKER="+mark)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the parent said nothing: %v", err)
	}
	var pgid int
	if _, err := fmt.Sscanf(line, "group %d", &pgid); err != nil {
		t.Fatalf("parent: %q", line)
	}
	proctest.WaitRunning(t, mark, 2)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	proctest.GroupGone(t, pgid)
	proctest.NoneRunning(t, mark)
}

// TestParentProcess is the "dsh" TestServersDieWithDsh kills: it starts a
// server, has it start its children, says the server's group and waits to be
// killed.
func TestParentProcess(t *testing.T) {
	if os.Getenv("DSH_MCP_TEST_PARENT") != "1" {
		t.Skip("run by TestServersDieWithDsh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := stdioConfig(t, "orphan")
	cfg.Env["DSH_MCP_TEST_PARENT"] = ""
	s, err := Start(ctx, []ServerConfig{cfg}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, find(t, s, "mcp__orphan__spawn"), `{"marker":"`+os.Getenv("DSH_MCP_TEST_MARKER")+`"}`); r.TextOf() != "started" {
		t.Fatal(r)
	}
	fmt.Printf("group %d\n", s.servers[0].conn().proc.Pgid)
	time.Sleep(time.Minute)
}
