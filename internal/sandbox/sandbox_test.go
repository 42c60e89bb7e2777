package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/sandbox/confine"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestNewPolicy: commands write in the workspace, the temp directory and the
// workspace's own caches, never in the user's caches or home; the cache
// variables point there; git's config and hooks, .dsh, .claude and the
// instruction files are protected.
func TestNewPolicy(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		name    string
		mode    Mode
		env     map[string]string
		write   []string // must be writable
		network bool
	}{
		{"defaults", On, map[string]string{"HOME": home, "TMPDIR": "/t"}, []string{"/ws", "/t", "/dev/shm"}, true},
		{"variables", NetworkOff, map[string]string{"HOME": home, "TMPDIR": "/t", "GOCACHE": "/gc", "GOPATH": "/gp1:/gp2",
			"XDG_CACHE_HOME": home + "/xc", "CARGO_HOME": "/ch", "npm_config_cache": "/nc", "PIP_CACHE_DIR": "relative"},
			[]string{"/ws", "/t"}, false},
		{"no home", On, map[string]string{"GOCACHE": "/gc"}, []string{"/ws", "/tmp"}, true}, // the "home" here is in /tmp
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
			}
			shared := []string{"/gc", "/gp1/pkg/mod", "/ch/registry", "/nc"}
			if tc.env["HOME"] != "" {
				shared = append(shared, home+"/go/pkg/mod", home+"/.cache/go-build", home+"/.npm", home+"/.bashrc", home+"/go/bin")
			}
			for _, shared := range shared {
				if p.Allows(shared) {
					t.Errorf("%s is writable: a command could change what runs outside the workspace", shared)
				}
			}
			for _, name := range []string{".git/config", ".git/hooks/pre-commit", ".gitmodules", ".dsh/config.toml", ".claude/settings.json", "AGENTS.md", "CLAUDE.md"} {
				if p.Allows("/ws/" + name) {
					t.Errorf("/ws/%s is writable", name)
				}
			}
			if !p.Allows("/ws/.git/index") || !p.Allows("/ws/src/AGENTS.md") {
				t.Error("the rest of the workspace is not writable")
			}
			vars := map[string]string{}
			for _, kv := range p.Env {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			if tc.env["HOME"] == "" {
				if len(p.Env) != 0 {
					t.Errorf("no home, yet caches %v", p.Env)
				}
			} else {
				for _, name := range []string{"GOCACHE", "GOMODCACHE", "XDG_CACHE_HOME", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME"} {
					if v := vars[name]; v == "" || !p.Allows(v) || !strings.Contains(v, "/dsh/sandbox/ws-") {
						t.Errorf("%s = %q, want a writable cache of the workspace's own", name, v)
					}
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

// TestGoproxy: Go modules the user already has are read from the user's
// module cache, never written there.
func TestGoproxy(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(home+"/go/pkg/mod/cache/download", 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPolicy(On, "/ws", env(map[string]string{"HOME": home, "GOPROXY": "https://example.com"}))
	want := "GOPROXY=file://" + home + "/go/pkg/mod/cache/download,https://example.com"
	if !slices.Contains(p.Env, want) {
		t.Errorf("env %v lacks %s", p.Env, want)
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
	abi := confine.ABI()
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
