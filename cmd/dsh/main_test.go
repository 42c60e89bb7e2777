package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// The test binary doubles as the attacker's reader (see reader).
func TestMain(m *testing.M) {
	if os.Getenv("DSH_TEST_READER") == "1" {
		reader(os.Args[1:])
		return
	}
	if path, ok := os.LookupEnv("DSH_TEST_UNIX"); ok {
		unixAttack(path)
		return
	}
	if line, ok := os.LookupEnv("DSH_TEST_TIOCSTI"); ok {
		tiocstiAttack(line)
		return
	}
	if file, ok := os.LookupEnv("DSH_TEST_PEAK"); ok {
		peak(file, os.Args[1:])
		return
	}
	code := m.Run()
	if dshPath != "" { // the binaries built for the run
		_ = os.RemoveAll(filepath.Dir(dshPath))
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	dshPath   string
	buildErr  error
)

// dsh builds the real binary once per test run.
func dsh(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds dsh")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsh-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		_ = os.Chmod(dir, 0o755) // the secrets test runs it as another user
		dshPath = filepath.Join(dir, "dsh")
		out, err := exec.Command("go", "build", "-o", dshPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		// The model runner, beside dsh as installed.
		out, err = exec.Command("go", "build", "-o", filepath.Join(dir, "dsh-model"), "../dsh-model").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build dsh-model: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return dshPath
}

// toolSession is `dsh tool --json -` with its stdin open.
type toolSession struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
}

func startTool(t *testing.T, cred *syscall.Credential, env []string, dir string, flags ...string) *toolSession {
	t.Helper()
	s := &toolSession{cmd: exec.Command(dsh(t), append(append([]string{"tool", "--json"}, flags...), "-")...)}
	s.cmd.Dir = dir
	s.cmd.Env = env
	s.cmd.Stdout = &s.out
	s.cmd.Stderr = &s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
	return s
}

func (s *toolSession) call(t *testing.T, command string, background bool) {
	t.Helper()
	line := fmt.Sprintf(`{"name":"bash","args":{"command":%s,"run_in_background":%t}}`+"\n", strconv.Quote(command), background)
	if _, err := io.WriteString(s.stdin, line); err != nil {
		t.Fatal(err)
	}
}

// wait waits for dsh to exit, at most d; it fails the test if dsh is still
// running then.
func (s *toolSession) wait(t *testing.T, d time.Duration) *os.ProcessState {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
		return s.cmd.ProcessState
	case <-time.After(d):
		t.Fatalf("dsh is still running %s after it was told to stop", d)
		return nil
	}
}

// TestKill9LeavesNothing: kill -9 of dsh, with a foreground command and a
// background job running, each with a process that left its group, leaves no
// process behind.
func TestKill9LeavesNothing(t *testing.T) {
	mark := proctest.Marker()
	s := startTool(t, nil, os.Environ(), t.TempDir())
	s.call(t, fmt.Sprintf("setsid -f sleep %s; sleep %s", mark, mark), true)
	s.call(t, fmt.Sprintf("(setsid sleep %s &); sleep %s", mark, mark), false)
	proctest.WaitRunning(t, mark, 4)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 10*time.Second)
	proctest.NoneRunning(t, mark)
}

// TestSignalsEndTheSession: SIGTERM, SIGINT and SIGHUP make `dsh tool -` end its
// session while it waits for input, which kills its jobs, and exit.
func TestSignalsEndTheSession(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			mark := proctest.Marker()
			s := startTool(t, nil, os.Environ(), t.TempDir())
			s.call(t, fmt.Sprintf("setsid -f sleep %s; sleep %s", mark, mark), true)
			proctest.WaitRunning(t, mark, 2)
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			st := s.wait(t, 15*time.Second)
			if ws := st.Sys().(syscall.WaitStatus); ws.Signaled() {
				t.Errorf("dsh was killed by %v instead of ending its session", ws.Signal())
			}
			proctest.NoneRunning(t, mark)
		})
	}
}

// TestSecretsUnreadable: a command running as the same non-root user as dsh
// cannot read dsh's provider keys from /proc/<dsh>/environ, /proc/<dsh>/mem or
// with ptrace, while the same reader reads them from a process of its own (the
// control that proves the reader works).
func TestSecretsUnreadable(t *testing.T) {
	exe := dsh(t)
	cred, home := nonRoot(t)
	dir := filepath.Dir(exe)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	readerPath := filepath.Join(dir, "reader")
	copyFile(t, self, readerPath)
	ws := filepath.Join(dir, "ws-"+strconv.Itoa(os.Getpid()))
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() { _ = os.RemoveAll(ws) })

	const prefix = "sk-dshtest-"
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	key := prefix + hex.EncodeToString(b)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_API_KEY=" + key, "OPENAI_API_KEY=" + key, "DATABASE_URL=postgres://u:" + key + "@db/x"}
	s := startTool(t, cred, env, ws)
	pid := s.cmd.Process.Pid
	waitNonDumpable(t, pid)
	if os.Geteuid() == 0 { // root reads any environ: the block itself must be clean
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || bytes.Contains(b, []byte(key)) || !bytes.Contains(b, []byte("HOME=")) {
			t.Errorf("dsh's /proc/pid/environ (%v) = %q, want HOME and no key", err, b)
		}
	}
	s.call(t, fmt.Sprintf(`cat /proc/%d/environ; echo "cat=$?"
CONTROL=%scontrol sleep 30 & control=$!; sleep 0.2
DSH_TEST_READER=1 %s %s dsh=%d control=$control
kill $control`, pid, prefix, readerPath, prefix, pid), false)
	_ = s.stdin.Close()
	s.wait(t, 60*time.Second)
	out := s.out.String()
	t.Logf("what the command saw:\n%s", out)
	if strings.Contains(out, key) {
		t.Fatalf("the command read dsh's key:\n%s", out)
	}
	if strings.Contains(out, "warning") {
		t.Errorf("dsh warned at start-up:\n%s", out)
	}
	for _, want := range []string{
		"cat=1", "uid=" + strconv.Itoa(int(uidOf(cred))),
		"dsh environ: refused", "dsh mem: refused", "dsh ptrace: refused",
		"control environ: found", "control mem: found", "control ptrace: attached",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// waitNonDumpable waits until dsh has hidden its keys: Hide turns dumping off
// last, and the kernel then gives the process's /proc files to root.
func waitNonDumpable(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && fi.Sys().(*syscall.Stat_t).Uid == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dsh (pid %d) never became non-dumpable: %v", pid, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func uidOf(cred *syscall.Credential) uint32 {
	if cred == nil {
		return uint32(os.Getuid())
	}
	return cred.Uid
}

// nonRoot returns the credentials to run dsh as a non-root user (nil: this
// user, who is not root) and a home directory for it. As root it creates a
// user, and skips the test only when it cannot.
func nonRoot(t *testing.T) (*syscall.Credential, string) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	// The user must reach its home (dsh reads its configuration there): every
	// directory above it, up to the test's temporary root, is opened to it.
	for d := filepath.Dir(home); d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		return nil, home
	}
	const name = "dsh-e2e-test"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
			t.Skipf("running as root and cannot create a user to run dsh as (%v: %s); run the test as a non-root user", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, home
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// reader is the attacker: for each label=pid it tries to read the secret
// (anything starting with the prefix, args[0]) from the process's environ and
// memory, and to ptrace it, and prints what happened without the secret.
func reader(args []string) {
	fmt.Printf("uid=%d\n", os.Getuid())
	prefix := []byte(args[0])
	for _, a := range args[1:] {
		label, p, _ := strings.Cut(a, "=")
		pid, _ := strconv.Atoi(p)
		fmt.Printf("%s environ: %s\n", label, verdict(readEnviron(pid, prefix)))
		fmt.Printf("%s mem: %s\n", label, verdict(readMem(pid, prefix)))
		fmt.Printf("%s ptrace: %s\n", label, attach(pid))
	}
}

func verdict(found bool, err error) string {
	switch {
	case err != nil:
		return "refused (" + err.Error() + ")"
	case found:
		return "found"
	}
	return "not found"
}

func readEnviron(pid int, prefix []byte) (bool, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return bytes.Contains(b, prefix), err
}

// readMem scans the process's memory, region by region as /proc/<pid>/maps
// lists them (or, if maps is refused, the heap-like ranges of a Go process).
func readMem(pid int, prefix []byte) (bool, error) {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return false, err
	}
	defer mem.Close()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[1], "r") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		buf := make([]byte, 1<<20)
		for off := start; off < end; off += uint64(len(buf)) {
			n := min(uint64(len(buf)), end-off)
			if k, _ := mem.ReadAt(buf[:n], int64(off)); bytes.Contains(buf[:k], prefix) {
				return true, nil
			}
		}
	}
	return false, nil
}

func attach(pid int) string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return "refused (" + err.Error() + ")"
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
	_ = unix.PtraceDetach(pid)
	return "attached"
}

// peak runs args and writes the peak RSS of that process alone, in bytes, to
// file. A child started straight from the test process cannot be measured:
// Linux folds the memory it shared with its parent before exec (Go starts a
// child with vfork) into the child's maxrss, so a test process grown large by
// earlier tests would be counted as the child's. This process is fresh.
func peak(file string, args []string) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState != nil {
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
		if werr := os.WriteFile(file, []byte(strconv.FormatInt(rss, 10)), 0o600); werr != nil {
			fmt.Fprintln(os.Stderr, werr)
			os.Exit(125)
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(125)
	}
	os.Exit(0)
}

// TestModelRunnerUnreadable: the model runner, handed a key to reach a
// vendor, keeps it from a command of the same user as dsh does: its environ,
// memory and ptrace are refused.
func TestModelRunnerUnreadable(t *testing.T) {
	exe := dsh(t)
	cred, _ := nonRoot(t)
	dir := filepath.Dir(exe)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	readerPath := filepath.Join(dir, "reader-runner")
	copyFile(t, self, readerPath)
	const prefix = "sk-dshtest-"
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	key := prefix + hex.EncodeToString(b)

	runner := exec.Command(filepath.Join(dir, "dsh-model"))
	runner.Env = []string{"PATH=" + os.Getenv("PATH")}
	runner.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	runner.Stderr = os.Stderr
	in, err := runner.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := runner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = runner.Wait() })
	out := bufio.NewReader(outPipe)
	if _, err := out.ReadString('\n'); err != nil { // its hello
		t.Fatal(err)
	}
	fmt.Fprintf(in, `{"id":1,"op":"build","spec":{"backend":"anthropic","env":{"ANTHROPIC_API_KEY":%q}}}`+"\n", key)
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"name":"anthropic"`) {
		t.Fatalf("build: %q, %v", line, err)
	}

	control := exec.Command("sleep", "30")
	control.Env = []string{"CONTROL=" + key}
	control.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = control.Process.Kill(); _ = control.Wait() })
	read := exec.Command(readerPath, prefix, "runner="+strconv.Itoa(runner.Process.Pid), "control="+strconv.Itoa(control.Process.Pid))
	read.Env = []string{"DSH_TEST_READER=1"}
	read.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	got, err := read.CombinedOutput()
	if err != nil {
		t.Fatalf("reader: %v\n%s", err, got)
	}
	for _, want := range []string{
		"runner environ: refused", "runner mem: refused", "runner ptrace: refused",
		"control environ: found", "control mem: found", "control ptrace: attached",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the reader's output lacks %q:\n%s", want, got)
		}
	}
}

// TestNoProviderSDK: dsh links no vendor's SDK, not even through another
// package; they are the model runner's (cmd/dsh-model), which dsh starts at
// the first model call.
func TestNoProviderSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(string(out))
	for _, sdk := range []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "github.com/aws/aws-sdk-go-v2",
		"github.com/Azure/azure-sdk-for-go", "github.com/dsh-dev/dsh/internal/provider/vendors"} {
		for _, d := range deps {
			if strings.HasPrefix(d, sdk) {
				t.Errorf("dsh links %s", d)
			}
		}
	}
	if !slices.Contains(deps, "github.com/dsh-dev/dsh/internal/provider/remote") {
		t.Error("dsh does not link the model runner's client")
	}
}
