// Command chatbench measures the terminal chat (bench/chat.sh) in a real
// terminal, tmux: the time from a keystroke to the frame that shows it while a
// command streams 100 MB of output, and the chat's memory over a session of
// 1000 calls printed into the scrollback.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	dsh     = flag.String("dsh", "dsh", "the dsh binary")
	samples = flag.Int("samples", 200, "keystrokes to time")
	calls   = flag.Int("calls", 1000, "calls in the long session")
)

// socket is this run's tmux server, so runs side by side do not kill each
// other's; each start takes a new one, since a server just told to exit may
// still take a new client and then exit under it ("server exited
// unexpectedly").
var (
	socket  = fmt.Sprintf("dsh-chatbench-%d", os.Getpid())
	servers int
)

// workDir is the run's temporary directory, removed however the run ends.
var workDir string

func tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func must(s string, err error) string {
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatbench:", err)
		_, _ = tmux("kill-server")
		if workDir != "" {
			_ = os.RemoveAll(workDir)
		}
		os.Exit(1)
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
	c := &ctl{cmd: exec.Command("tmux", "-L", socket, "-C", "attach", "-t", "bench")}
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
	if control != nil {
		_ = control.in.Close()
		_ = control.cmd.Wait()
		control = nil
	}
}

func (c *ctl) send(command string) error {
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

// start runs dsh in a new tmux session as the pane's process and returns its pid.
func start(dir, script string) int {
	detach()
	_, _ = tmux("kill-server")
	servers++
	socket = fmt.Sprintf("dsh-chatbench-%d-%d", os.Getpid(), servers)
	cmd := fmt.Sprintf("cd %s && exec env XDG_STATE_HOME=%s/state HOME=%s %s --mode bypass --color never --provider script --script %s",
		dir, dir, dir, *dsh, script)
	must(tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", cmd))
	pid, err := strconv.Atoi(strings.TrimSpace(must(tmux("display-message", "-p", "-t", "bench", "#{pane_pid}"))))
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
	pid := start(dir, script)
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
	_, _ = tmux("kill-server")

	// The same keystrokes with nothing running: what tmux and the polling cost.
	idle := filepath.Join(dir, "idle.json")
	write(idle, `{"turns": [{"text": "done"}]}`)
	start(dir, idle)
	report("idle, for reference", keystrokes(*samples))
	fmt.Printf("  load average %s\n", loadavg())
	_, _ = tmux("kill-server")
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

func memory(dir string) {
	var src bytes.Buffer
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&src, "line %d of a file the model reads over and over, to fill the scrollback\n", i)
	}
	write(filepath.Join(dir, "big.txt"), src.String())
	const perTurn = 40
	var turns []string
	for n := 0; n < *calls; n += perTurn {
		var cs []string
		for j := n; j < min(n+perTurn, *calls); j++ {
			cs = append(cs, fmt.Sprintf(`{"id": "c%d", "name": "read", "args": {"path": "big.txt"}}`, j))
		}
		turns = append(turns, fmt.Sprintf(`{"text": "Reading again.", "tool_calls": [%s]}`, strings.Join(cs, ",")))
	}
	turns = append(turns, `{"text": "all read"}`)
	script := filepath.Join(dir, "calls.json")
	write(script, `{"turns": [`+strings.Join(turns, ",\n")+`]}`)
	pid := start(dir, script)
	idle, _, _ := rss(pid)
	t0 := time.Now()
	must(tmux("send-keys", "-t", "bench", "-l", "go"))
	must(tmux("send-keys", "-t", "bench", "Enter"))
	waitFor("the 1000 calls", func(s string) bool { return strings.Contains(s, "all read") }, 5*time.Minute)
	took := time.Since(t0)
	cur, peak, anon := rss(pid)
	fmt.Printf("RSS over a session of %d calls in the scrollback: %.1f MiB at the end (%.1f MiB of it the process's own memory, the rest the binary's pages), %.1f MiB peak, %.1f MiB idle before (target <= 80 MiB); the turn took %s\n",
		*calls, float64(cur)/1024, float64(anon)/1024, float64(peak)/1024, float64(idle)/1024, took.Round(time.Millisecond))
	_, _ = tmux("kill-server")
}

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "chatbench-")
	must("", err)
	workDir = dir
	defer func() { _ = os.RemoveAll(dir) }()
	latency(dir)
	memory(dir)
}
