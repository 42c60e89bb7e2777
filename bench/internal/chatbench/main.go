// Command chatbench measures the terminal chat (bench/chat.sh) in a real
// terminal, tmux: the time from a keystroke to the frame that shows it while a
// command streams 100 MB of output, and the chat's memory and time over a
// session of -calls calls printed into the scrollback. With -before it runs
// that session with the other binary too and prints the ratios as RATIO lines.
// Its tmux servers' sockets and dsh's files live in one temporary folder,
// removed however the run ends (an error, SIGINT, SIGTERM, SIGHUP).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	dsh     = flag.String("dsh", "dsh", "the dsh binary")
	samples = flag.Int("samples", 200, "keystrokes to time")
	calls   = flag.Int("calls", 1000, "calls in the long session")
	before  = flag.String("before", "", "a dsh binary whose long session to compare with (optional)")
)

// socket is this run's tmux server, a socket in workDir, so runs side by side
// do not kill each other's and none is left behind; each start takes a new
// one, since a server just told to exit may still take a new client and then
// exit under it ("server exited unexpectedly").
var (
	socket  string
	servers int
	// paneDsh is the dsh the current server runs: it must be gone before
	// workDir is removed, or its last writes would make the folder again.
	paneDsh int
)

// workDir is the run's temporary directory, removed however the run ends.
var workDir string

func tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// stopServer ends the current tmux server and waits (a bounded while) for the
// dsh it ran to exit.
func stopServer() {
	detach()
	if socket != "" {
		_, _ = tmux("kill-server")
		_ = os.Remove(socket)
	}
	if paneDsh > 0 {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if syscall.Kill(paneDsh, 0) != nil {
				break
			}
		}
		paneDsh = 0
	}
}

// exiting is held by the first exit: a signal's and a failure's cleanups do
// not run at once, and the second waits for the first's os.Exit. starting is
// held while a server starts, which an exit waits for, so that no server
// starts after the exit stopped the last one.
var (
	exiting, starting sync.Mutex
	closing           atomic.Bool
)

// exit cleans up (the tmux server, dsh, the temporary folder) and exits.
func exit(code int) {
	exiting.Lock()
	closing.Store(true)
	starting.Lock()
	stopServer()
	if workDir != "" {
		_ = os.RemoveAll(workDir)
	}
	os.Exit(code)
}

func must(s string, err error) string {
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatbench:", err)
		exit(1)
	}
	return s
}

// ctl is a tmux control-mode client on the bench session: keys are sent and
// the pane is read through it, so timing a frame does not start a tmux
// process per poll, whose cost on a small machine would be the figure.
type ctl struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

var control *ctl

func attach() {
	c := &ctl{cmd: exec.Command("tmux", "-S", socket, "-C", "attach", "-t", "bench")}
	in, err := c.cmd.StdinPipe()
	must("", err)
	out, err := c.cmd.StdoutPipe()
	must("", err)
	must("", c.cmd.Start())
	c.in, c.out = in, bufio.NewReaderSize(out, 1<<20)
	control = c
	// The attach answers first; commands sent before it is done find no
	// client.
	must(c.block())
	must(c.run("refresh-client -f no-output"))
}

func detach() {
	if c := control; c != nil {
		control = nil
		_ = c.in.Close()
		_ = c.cmd.Wait()
	}
}

func (c *ctl) send(command string) error {
	if c == nil { // a signal's exit detached it: it ends the process
		select {}
	}
	_, err := io.WriteString(c.in, command+"\n")
	return err
}

// block reads the next command's answer, skipping notifications.
func (c *ctl) block() (string, error) {
	var b strings.Builder
	in := false
	for {
		l, err := c.out.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("tmux control client: %w", err)
		}
		l = strings.TrimSuffix(l, "\n")
		switch {
		case !in && strings.HasPrefix(l, "%begin "):
			in = true
		case in && strings.HasPrefix(l, "%end "):
			return b.String(), nil
		case in && strings.HasPrefix(l, "%error "):
			return "", fmt.Errorf("tmux: %s", b.String())
		case in:
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
}

func (c *ctl) run(command string) (string, error) {
	if err := c.send(command); err != nil {
		return "", err
	}
	return c.block()
}

func screen() string { return must(control.run("capture-pane -p -t bench")) }

func sendKeys(keys string) { must(control.run("send-keys -t bench -l " + keys)) }

func waitFor(what string, ok func(string) bool, d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		s := screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			must("", fmt.Errorf("timed out waiting for %s; the screen:\n%s", what, s))
		}
		time.Sleep(time.Millisecond)
	}
}

// start runs bin (dsh) in a new tmux session as the pane's process and
// returns its pid.
func start(bin, dir, script string) int {
	stopServer()
	starting.Lock()
	if closing.Load() {
		select {} // the exit under way ends the process
	}
	servers++
	socket = filepath.Join(dir, fmt.Sprintf("tmux-%d", servers))
	cmd := fmt.Sprintf("cd %s && exec env XDG_STATE_HOME=%s/state HOME=%s %s --mode bypass --color never --provider script --script %s",
		dir, dir, dir, bin, script)
	_, err := tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", cmd)
	pid := 0
	if err == nil {
		var out string
		if out, err = tmux("display-message", "-p", "-t", "bench", "#{pane_pid}"); err == nil {
			pid, err = strconv.Atoi(strings.TrimSpace(out))
		}
	}
	paneDsh = pid
	starting.Unlock() // before must: an exit takes it
	must("", err)
	attach()
	waitFor("the chat", func(s string) bool { return strings.Contains(s, "Ask dsh") }, 10*time.Second)
	return pid
}

func write(path, s string) {
	must("", os.WriteFile(path, []byte(s), 0o644))
}

// inputKs counts the k's in the input, which wraps onto more lines.
func inputKs(s string) int {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, "› ")
		if !ok || rest == "" || strings.Trim(rest, "k ") != "" {
			continue
		}
		n := strings.Count(rest, "k")
		for _, l := range lines[i+1:] {
			if rest, ok := strings.CutPrefix(l, "  "); ok && rest != "" && strings.Trim(rest, "k ") == "" {
				n += strings.Count(rest, "k")
				continue
			}
			break
		}
		return n
	}
	return -1
}

func latency(dir string) {
	script := filepath.Join(dir, "stream.json")
	write(script, `{"turns": [{"tool_calls": [{"name": "bash", "args": {"command": "while :; do yes 'a line of streamed output, seventy-odd bytes long, again and again' | head -c 100000000; echo streamed-100MB >&2; done"}}]}, {"text": "done"}]}`)
	pid := start(*dsh, dir, script)
	must(tmux("send-keys", "-t", "bench", "-l", "go"))
	must(tmux("send-keys", "-t", "bench", "Enter"))
	waitFor("the stream", func(s string) bool { return strings.Contains(s, "a line of streamed output") }, 20*time.Second)
	cpu0, t0 := cpuTime(pid), time.Now()
	ms := keystrokes(*samples)
	cpu := (cpuTime(pid) - cpu0).Seconds() / time.Since(t0).Seconds()
	s := screen()
	if !strings.Contains(s, "a line of streamed output") {
		must("", fmt.Errorf("the command stopped streaming during the measurement:\n%s", s))
	}
	report("while a command streams 100 MB after 100 MB", ms)
	fmt.Printf("  dsh itself (not the command) used %.0f%% of a core meanwhile; load average %s\n", cpu*100, loadavg())

	// The same keystrokes with nothing running: what tmux and the polling cost.
	idle := filepath.Join(dir, "idle.json")
	write(idle, `{"turns": [{"text": "done"}]}`)
	start(*dsh, dir, idle)
	report("idle, for reference", keystrokes(*samples))
	fmt.Printf("  load average %s\n", loadavg())
	stopServer()
}

// keystrokes types n k's one at a time and returns, for each, the milliseconds
// until the pane shows it.
func keystrokes(n int) []float64 {
	base := max(inputKs(screen()), 0)
	var ms []float64
	for i := 1; i <= n; i++ {
		t0 := time.Now()
		sendKeys("k")
		waitFor("a keystroke's frame", func(s string) bool { return inputKs(s) >= base+i }, 10*time.Second)
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
	}
	return ms
}

func report(what string, ms []float64) {
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	fmt.Printf("keystroke → frame %s: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (%d keystrokes; target p99 <= 50 ms)\n",
		what, pct(0.5), pct(0.9), pct(0.99), ms[len(ms)-1], len(ms))
}

// cpuTime is the user and system time pid has used (the clock ticks of
// /proc/PID/stat, 100 a second on Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must("", err)
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// loadavg is the machine's load over the last minute: on a shared machine the
// latency figures say more with it.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

func rss(pid int) (cur, peak, anon int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must("", err)
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "VmRSS:":
			cur = n
		case "VmHWM:":
			peak = n
		case "RssAnon:":
			anon = n
		}
	}
	return cur, peak, anon
}

// A prompt's model turns stay under the agent's limit of round trips per
// prompt (50): a longer session is several prompts.
const (
	callsPerTurn   = 40
	turnsPerPrompt = 40
)

// sessionCost is what a long session cost: its RSS at the end, the process's own
// part of it, the peak, the RSS before it, and the time its prompts took.
type sessionCost struct {
	cur, anon, peak, idle int
	took                  time.Duration
}

// longSession runs bin through a session of calls read calls, callsPerTurn to
// a model turn, prompt after prompt.
func longSession(bin, dir string, calls int) sessionCost {
	var turns []string
	var marks []string
	prompts := 0
	for n := 0; n < calls; n += callsPerTurn * turnsPerPrompt {
		prompts++
		for t := n; t < min(n+callsPerTurn*turnsPerPrompt, calls); t += callsPerTurn {
			var cs []string
			for j := t; j < min(t+callsPerTurn, calls); j++ {
				cs = append(cs, fmt.Sprintf(`{"id": "c%d", "name": "read", "args": {"path": "big.txt"}}`, j))
			}
			turns = append(turns, fmt.Sprintf(`{"text": "Reading again.", "tool_calls": [%s]}`, strings.Join(cs, ",")))
		}
		marks = append(marks, fmt.Sprintf("batch %d read", prompts))
		turns = append(turns, fmt.Sprintf(`{"text": %q}`, marks[len(marks)-1]))
	}
	script := filepath.Join(dir, "calls.json")
	write(script, `{"turns": [`+strings.Join(turns, ",\n")+`]}`)
	pid := start(bin, dir, script)
	var c sessionCost
	c.idle, _, _ = rss(pid)
	t0 := time.Now()
	for _, mark := range marks {
		must(tmux("send-keys", "-t", "bench", "-l", "go"))
		must(tmux("send-keys", "-t", "bench", "Enter"))
		waitFor(mark, func(s string) bool { return strings.Contains(s, mark) }, 5*time.Minute)
	}
	c.took = time.Since(t0)
	c.cur, c.peak, c.anon = rss(pid)
	stopServer()
	return c
}

func memory(dir string) {
	var src bytes.Buffer
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&src, "line %d of a file the model reads over and over, to fill the scrollback\n", i)
	}
	write(filepath.Join(dir, "big.txt"), src.String())
	c := longSession(*dsh, dir, *calls)
	fmt.Printf("RSS over a session of %d calls in the scrollback: %.1f MiB at the end (%.1f MiB of it the process's own memory, the rest the binary's pages), %.1f MiB peak, %.1f MiB idle before (target <= 80 MiB); its prompts took %s\n",
		*calls, float64(c.cur)/1024, float64(c.anon)/1024, float64(c.peak)/1024, float64(c.idle)/1024, c.took.Round(time.Millisecond))
	if *before == "" {
		return
	}
	b := longSession(*before, dir, *calls)
	fmt.Printf("  before: %.1f MiB at the end, %.1f MiB peak; its prompts took %s\n", float64(b.cur)/1024, float64(b.peak)/1024, b.took.Round(time.Millisecond))
	fmt.Printf("RATIO chat-%d-calls-time %.2fx target <= 1.10x\n", *calls, c.took.Seconds()/b.took.Seconds())
	fmt.Printf("RATIO chat-%d-calls-peak-rss %.2fx target <= 1.10x\n", *calls, float64(c.peak)/float64(b.peak))
}

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "chatbench-")
	must("", err)
	workDir = dir
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "chatbench: %v: cleaning up\n", s)
		exit(1)
	}()
	if *samples > 0 {
		latency(dir)
	}
	memory(dir)
	exit(0)
}
