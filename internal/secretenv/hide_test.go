package secretenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the process that hides its secrets: Hide changes
// the process for good, so it runs in a child.
func TestMain(m *testing.M) {
	if os.Getenv("SECRETENV_TEST_HELPER") == "1" {
		helper()
		return
	}
	os.Exit(m.Run())
}

type report struct {
	Err      string
	Dumpable int
	Getenv   map[string]string
	OSGetenv map[string]string
	Environ  string // /proc/self/environ after Hide
	Child    string // what a child process inherits
}

func helper() {
	var r report
	if err := Hide(); err != nil {
		r.Err = err.Error()
	}
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	r.Dumpable = d
	r.Getenv, r.OSGetenv = map[string]string{}, map[string]string{}
	for _, n := range []string{"ANTHROPIC_API_KEY", "DATABASE_URL", "GITHUB_TOKEN", "PLAIN_SETTING"} {
		r.Getenv[n], r.OSGetenv[n] = Getenv(n), os.Getenv(n)
	}
	b, _ := os.ReadFile("/proc/self/environ")
	r.Environ = string(b)
	out, _ := exec.Command("env").Output()
	r.Child = string(out)
	_ = json.NewEncoder(os.Stdout).Encode(r)
}

func TestHide(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const key, dbPass = "sk-ant-hide-test-0123456789", "db-pass-hide-test"
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		"SECRETENV_TEST_HELPER=1",
		"ANTHROPIC_API_KEY="+key,
		"DATABASE_URL=postgres://app:"+dbPass+"@db/app",
		"GITHUB_TOKEN=kept-token",
		"DSH_KEEP_ENV=OTHER, GITHUB_TOKEN",
		"PLAIN_SETTING=plain")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Err != "" {
		t.Fatalf("Hide: %s", r.Err)
	}
	if r.Dumpable != 0 {
		t.Errorf("dumpable = %d after Hide, want 0", r.Dumpable)
	}
	want := map[string]string{"ANTHROPIC_API_KEY": key, "DATABASE_URL": "postgres://app:" + dbPass + "@db/app", "GITHUB_TOKEN": "kept-token", "PLAIN_SETTING": "plain"}
	for n, v := range want {
		if r.Getenv[n] != v {
			t.Errorf("Getenv(%s) = %q, want %q", n, r.Getenv[n], v)
		}
	}
	for _, n := range []string{"ANTHROPIC_API_KEY", "DATABASE_URL"} {
		if r.OSGetenv[n] != "" {
			t.Errorf("os.Getenv(%s) still returns the secret", n)
		}
	}
	for where, s := range map[string]string{"/proc/self/environ": r.Environ, "a child's environment": r.Child} {
		for _, secret := range []string{key, dbPass} {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds %q", where, secret)
			}
		}
		for _, kv := range []string{"GITHUB_TOKEN=kept-token", "PLAIN_SETTING=plain", "PATH="} {
			if !strings.Contains(s, kv) {
				t.Errorf("%s lost %s:\n%s", where, kv, s)
			}
		}
	}
	if !strings.Contains(r.Environ, "PLAIN_SETTING=plain\x00") {
		t.Errorf("environ is not NUL-separated: %q", r.Environ)
	}
}

func TestKeepList(t *testing.T) {
	got := fmt.Sprint(KeepList(func(string) string { return " A ,B,, C" }))
	if got != "[A B C]" {
		t.Errorf("KeepList = %s", got)
	}
}

// BenchmarkOverwriteEnviron bounds what Hide adds to start-up: finding the
// environ block and rewriting it (here with its own bytes, read first).
func BenchmarkOverwriteEnviron(b *testing.B) {
	for b.Loop() {
		start, end, err := environBounds()
		if err != nil {
			b.Fatal(err)
		}
		block := make([]byte, end-start)
		mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mem.ReadAt(block, int64(start)); err != nil {
			b.Fatal(err)
		}
		if _, err := mem.WriteAt(block, int64(start)); err != nil {
			b.Fatal(err)
		}
		_ = mem.Close()
	}
}
