package bash

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/sandbox"
)

// attackIn runs the attacker (this test binary, see attack) as a command of f
// and returns its output.
func attackIn(t *testing.T, f *fixture, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	command := exe + " attack " + strings.Join(args, " ")
	return f.terminal(command, f.bash(command)).Output
}

func mustRefuse(t *testing.T, mode sandbox.Mode, out string, whats ...string) {
	t.Helper()
	for _, what := range whats {
		if !strings.Contains(out, what+": refused") {
			t.Errorf("%s: %s was not refused:\n%s", mode, what, out)
		}
	}
}

// TestSandboxUnixSockets: a sandboxed command cannot connect to a pathname
// socket of a server outside the sandbox (a tmux, docker or ssh-agent socket),
// in either sandbox mode; unsandboxed, the same attacker gets through.
func TestSandboxUnixSockets(t *testing.T) {
	needSandbox(t, sandbox.NetworkOff)
	sandboxDirs(t)
	path := filepath.Join(t.TempDir(), "server.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 16)
			if n, _ := c.Read(b); bytes.HasPrefix(b[:n], []byte("PAYLOAD")) {
				got.Add(1)
			}
			_ = c.Close()
		}
	}()
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.On, sandbox.NetworkOff} {
		before := got.Load()
		out := attackIn(t, newFixture(t, Options{Sandbox: mode}), "unix", path)
		time.Sleep(50 * time.Millisecond)
		reached := got.Load() > before
		if mode == sandbox.Off {
			if !strings.Contains(out, "unix: done") || !reached {
				t.Fatalf("the control did not reach the server (%v): %s", reached, out)
			}
			continue
		}
		mustRefuse(t, mode, out, "unix")
		if reached {
			t.Errorf("%s: the payload reached the server", mode)
		}
	}
	// Unix sockets of the command's own still work: socketpair, and pipes.
	f := newFixture(t, Options{Sandbox: sandbox.NetworkOff})
	if r := f.bash("coproc cat; echo hi >&${COPROC[1]}; read -r x <&${COPROC[0]}; echo got-$x"); !strings.Contains(r.TextOf(), "got-hi") {
		t.Errorf("a coprocess in the sandbox: %s", r.TextOf())
	}
}

// TestSandboxNetworkOffSockets: with the network off, no UDP datagram leaves
// (DNS exfiltration), and ICMP, raw, packet and vsock sockets cannot be made;
// io_uring, which no filter sees, is refused in every sandbox mode. With the
// network on, the same datagram arrives (the control).
func TestSandboxNetworkOffSockets(t *testing.T) {
	needSandbox(t, sandbox.NetworkOff)
	sandboxDirs(t)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var got atomic.Int32
	go func() {
		b := make([]byte, 64)
		for {
			n, _, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			if string(b[:n]) == "PAYLOAD" {
				got.Add(1)
			}
		}
	}()
	addr := pc.LocalAddr().String()
	for _, mode := range []sandbox.Mode{sandbox.On, sandbox.NetworkOff} {
		before := got.Load()
		out := attackIn(t, newFixture(t, Options{Sandbox: mode}), "udp", addr, "icmp", "raw", "packet", "vsock", "io_uring")
		time.Sleep(50 * time.Millisecond)
		reached := got.Load() > before
		mustRefuse(t, mode, out, "io_uring")
		if mode == sandbox.On {
			if !reached {
				t.Errorf("the control datagram did not arrive: %s", out)
			}
			continue
		}
		mustRefuse(t, mode, out, "udp", "icmp", "raw", "packet", "vsock")
		if reached {
			t.Errorf("a datagram left network-off")
		}
	}
}

// TestSandboxMetadata: outside the write set, a sandboxed command can change
// no mode, owner, time or extended attribute; in the workspace it can.
func TestSandboxMetadata(t *testing.T) {
	needSandbox(t, sandbox.On)
	_, _, _, outside := sandboxDirs(t)
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before unix.Stat_t
	if err := unix.Lstat(victim, &before); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	out := attackIn(t, f, "chmod", victim, "chown", victim, "utime", victim, "setxattr", victim)
	mustRefuse(t, sandbox.On, out, "chmod", "chown", "utime", "setxattr")
	var after unix.Stat_t
	if err := unix.Lstat(victim, &after); err != nil {
		t.Fatal(err)
	}
	if after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid || after.Mtim != before.Mtim {
		t.Errorf("the victim changed: %+v, was %+v", after, before)
	}
	if n, _ := unix.Lgetxattr(victim, "user.dsh", nil); n > 0 {
		t.Error("the victim got an extended attribute")
	}
	own := filepath.Join(f.root, "own")
	if err := os.WriteFile(own, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := attackIn(t, f, "chmod", own, "utime", own); strings.Count(out, ": done") != 2 {
		t.Errorf("metadata in the workspace: %s", out)
	}
}

// TestSandboxRootCapabilities: a root command in the sandbox has no
// capability and cannot regain one; unsandboxed, it has them (the control).
func TestSandboxRootCapabilities(t *testing.T) {
	needSandbox(t, sandbox.On)
	if os.Geteuid() != 0 {
		t.Skip("needs root (TestSandboxUnixSockets and the others attack as this user)")
	}
	sandboxDirs(t)
	const command = "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status"
	if out := newFixture(t).bash(command).TextOf(); !strings.Contains(out, "CapEff:\t000001ff") {
		t.Fatalf("the unsandboxed control has no capabilities: %s", out)
	}
	out := newFixture(t, Options{Sandbox: sandbox.On}).bash(command).TextOf()
	for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
		"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	if out := attackIn(t, f, "raw", "packet"); !strings.Contains(out, "raw: refused") || !strings.Contains(out, "packet: refused") {
		t.Errorf("raw sockets with the network on: %s", out)
	}
}

// TestSandboxProtectedFiles: in the workspace, git's config and hooks,
// .gitmodules, .dsh, .claude and the instruction files cannot be written,
// replaced, removed, renamed or moved aside with .git; the rest of the
// repository, git included, works.
func TestSandboxProtectedFiles(t *testing.T) {
	needSandbox(t, sandbox.On)
	sandboxDirs(t)
	f := newFixture(t, Options{Sandbox: sandbox.On})
	if out, err := exec.Command("git", "init", "-q", f.root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for name, text := range map[string]string{
		".gitmodules": "", ".dsh/config.toml": "model = \"x\"\n", ".claude/settings.json": "{}\n",
		"AGENTS.md": "be good\n", "CLAUDE.md": "be good\n", ".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
	} {
		p := filepath.Join(f.root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	protected := []string{".git/config", ".git/hooks", ".gitmodules", ".dsh", ".claude", "AGENTS.md", "CLAUDE.md"}
	before := snapshot(t, f.root, protected)
	if r := f.bash("echo x > new && git add new && git -c user.name=t -c user.email=t@t commit -qm x && git log --oneline | wc -l && echo more >> new"); r.IsError || !strings.Contains(r.TextOf(), "1") {
		t.Errorf("git in the sandbox: %s", r.TextOf())
	}
	// .git's other files stay writable: rm -rf .git below removes them.
	for _, command := range []string{
		"git config core.fsmonitor 'touch /tmp/pwned'",
		"echo '[core] fsmonitor = evil' >> .git/config",
		"printf '#!/bin/sh\\nevil\\n' > .git/hooks/post-checkout",
		"echo evil >> .git/hooks/pre-commit",
		"rm -rf .git/hooks",
		"mv .git/config .git/config.old",
		"mv .git .git-old",
		"rm -rf .git",
		"echo evil > AGENTS.md",
		"rm CLAUDE.md",
		"echo '[submodule \"x\"]' >> .gitmodules",
		"echo evil > .dsh/config.toml",
		"mkdir .claude/hooks",
		"mv .claude .claude-old",
		"chmod 777 AGENTS.md",
		"touch -d 2000-01-01 CLAUDE.md",
	} {
		if r := f.bash(command); !r.IsError {
			t.Errorf("%s: succeeded in the sandbox: %s", command, r.TextOf())
		}
	}
	if after := snapshot(t, f.root, protected); after != before {
		t.Errorf("the protected files changed:\n%s\nwere\n%s", after, before)
	}
}

// snapshot describes the files at names under root: each path, mode, time and
// a digest of its content.
func snapshot(t *testing.T, root string, names []string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range names {
		_ = filepath.Walk(filepath.Join(root, name), func(path string, fi os.FileInfo, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", path, err)
				return nil
			}
			data, _ := os.ReadFile(path)
			fmt.Fprintf(&b, "%s %v %d %x\n", path, fi.Mode(), fi.ModTime().UnixNano(), sha256.Sum256(data))
			return nil
		})
	}
	return b.String()
}

// TestSandboxCaches: a sandboxed command cannot change the user's shared
// caches (a poisoned module would run in every other project); its cache
// variables point at the workspace's own, which it can write.
func TestSandboxCaches(t *testing.T) {
	needSandbox(t, sandbox.On)
	_, home, _, _ := sandboxDirs(t)
	shared := filepath.Join(home, "go", "pkg", "mod")
	if err := os.MkdirAll(filepath.Join(shared, "example.com", "m@v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(shared, "example.com", "m@v1", "m.go")
	if err := os.WriteFile(victim, []byte("package m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	if r := f.bash("echo 'func init() { evil() }' >> " + victim); !r.IsError {
		t.Errorf("the shared module cache was written: %s", r.TextOf())
	}
	if b, _ := os.ReadFile(victim); string(b) != "package m\n" {
		t.Errorf("the module changed: %q", b)
	}
	r := f.bash(`for v in GOMODCACHE GOCACHE npm_config_cache PIP_CACHE_DIR CARGO_HOME XDG_CACHE_HOME; do d=${!v}; mkdir -p "$d" && echo x > "$d/f" && echo "$v=$d"; done`)
	if r.IsError {
		t.Fatalf("the workspace's caches: %s", r.TextOf())
	}
	if strings.Contains(r.TextOf(), "="+shared) || strings.Count(r.TextOf(), "/dsh/sandbox/") != 6 {
		t.Errorf("cache variables: %s", r.TextOf())
	}
}
