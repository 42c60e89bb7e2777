package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestNewPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    Mode
		env     map[string]string
		write   []string // must be writable
		network bool
	}{
		{"defaults", On, map[string]string{"HOME": "/h"}, []string{
			"/ws", "/tmp", "/dev/shm", "/h/.cache/go-build", "/h/go/pkg/mod", "/h/go/pkg/sumdb", "/h/.npm",
			"/h/.cache/yarn", "/h/.cache/pip", "/h/.cargo/registry", "/h/.cargo/git", "/h/.m2/repository"}, true},
		{"variables", NetworkOff, map[string]string{"HOME": "/h", "TMPDIR": "/t", "GOCACHE": "/gc", "GOPATH": "/gp1:/gp2",
			"XDG_CACHE_HOME": "/xc", "CARGO_HOME": "/ch", "npm_config_cache": "/nc", "PIP_CACHE_DIR": "relative"},
			[]string{"/ws", "/t", "/gc", "/gp1/pkg/mod", "/xc/yarn", "/ch/registry", "/nc"}, false},
		{"no home", On, map[string]string{"GOCACHE": "/gc"}, []string{"/ws", "/tmp", "/gc"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPolicy(tc.mode, "/ws", env(tc.env))
			for _, w := range tc.write {
				if !slices.Contains(p.Write, w) {
					t.Errorf("%s not writable: %v", w, p.Write)
				}
			}
			for _, w := range p.Write {
				if !filepath.IsAbs(w) {
					t.Errorf("relative writable path %q", w)
				}
				if strings.HasSuffix(w, "/bin") || w == "/h" || w == "/h/go" || w == "/h/.cargo" {
					t.Errorf("%s is writable: a command could plant programs or dotfiles", w)
				}
			}
			if p.Network != tc.network {
				t.Errorf("network = %v, want %v", p.Network, tc.network)
			}
		})
	}
	if NewPolicy(Off, "/ws", env(nil)) != nil || NewPolicy("", "/ws", env(nil)) != nil {
		t.Error("off has a policy")
	}
}

func TestAllows(t *testing.T) {
	p := &Policy{Write: []string{"/ws", "/tmp"}}
	for path, want := range map[string]bool{
		"/ws": true, "/ws/a/b": true, "/ws/../etc/x": false, "/wsx/a": false, "/tmp/x": true,
		"/etc/passwd": false, "/dev/null": true, "/dev/sda": false, "/": false,
	} {
		if got := p.Allows(path); got != want {
			t.Errorf("Allows(%s) = %v, want %v", path, got, want)
		}
	}
}

func TestRefusal(t *testing.T) {
	home := t.TempDir() // writable by this user, outside the policy
	ws := t.TempDir()
	p := &Policy{Write: []string{ws}}
	for _, tc := range []struct{ output, want string }{
		{"ok\n", ""},
		{"touch: cannot touch '" + home + "/x': Permission denied\n", "touch: cannot touch '" + home + "/x': Permission denied"},
		{"a\nbash: " + home + "/x: Permission denied\nb\n", "bash: " + home + "/x: Permission denied"},
		{"mkdir: cannot create directory ‘" + home + "/d’: Permission denied", "mkdir: cannot create directory ‘" + home + "/d’: Permission denied"},
		{"open " + home + "/f: permission denied\n", "open " + home + "/f: permission denied"},
		{"bash: connect: Permission denied\n", "bash: connect: Permission denied"},
		{"kill: (1) - Operation not permitted\n", "kill: (1) - Operation not permitted"},
		// Inside the workspace, the sandbox is not the reason.
		{"bash: " + ws + "/ro: Permission denied\n", ""},
		// Nor where the user could not write anyway.
		{"cat: /proc/1/mem/x: Permission denied\n", ""},
	} {
		if got := p.Refusal(tc.output); got != tc.want {
			t.Errorf("Refusal(%q) = %q, want %q", tc.output, got, tc.want)
		}
	}
}

func TestModeFlag(t *testing.T) {
	var m Mode
	for _, s := range []string{"on", "off", "network-off"} {
		if err := m.Set(s); err != nil || m.String() != s {
			t.Errorf("Set(%s): %v, %s", s, err, m.String())
		}
	}
	if err := m.Set("yes"); err == nil {
		t.Error("Set(yes) accepted")
	}
	if !On.Enabled() || !NetworkOff.Enabled() || Off.Enabled() || Mode("").Enabled() {
		t.Error("Enabled is wrong")
	}
}

// TestCheck: off always works; on and network-off work here exactly when the
// kernel has the Landlock ABI they need.
func TestCheck(t *testing.T) {
	if err := Check(Off); err != nil {
		t.Errorf("Check(off) = %v", err)
	}
	abi := kernelABI()
	for mode, need := range map[Mode]int{On: minABI, NetworkOff: minNetworkABI} {
		err := Check(mode)
		if (err == nil) != (abi >= need) {
			t.Errorf("Check(%s) = %v with Landlock ABI %d", mode, err, abi)
		}
		if err != nil && !strings.Contains(err.Error(), "Landlock") {
			t.Errorf("Check(%s) does not say what is missing: %v", mode, err)
		}
	}
	t.Logf("Landlock ABI %d", abi)
}

// TestABIRights: each ABI version restricts what it introduced, and no right
// the kernel would reject is asked of an older one.
func TestABIRights(t *testing.T) {
	const truncate, ioctl = 1 << 14, 1 << 15
	for _, tc := range []struct {
		abi                 int
		truncate, ioctl     bool
		net, scoped, udpNet bool
	}{
		{1, false, false, false, false, false},
		{3, true, false, false, false, false},
		{4, true, false, true, false, false},
		{6, true, true, true, true, false},
		{7, true, true, true, true, false},
		{10, true, true, true, true, true},
	} {
		fs, net, scoped := abiRights(tc.abi)
		if fs&truncate != 0 != tc.truncate || fs&ioctl != 0 != tc.ioctl || net != 0 != tc.net || scoped != 0 != tc.scoped || net > 3 != tc.udpNet {
			t.Errorf("ABI %d: fs %#x net %#x scoped %#x", tc.abi, fs, net, scoped)
		}
	}
}
