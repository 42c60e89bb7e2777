// Command cmdbench measures what one short command costs through dsh's bash
// tool (`dsh tool --json -`, one call after another) against plain os/exec of
// the same `bash -c true`, in interleaved rounds (the best round counts, so
// that a loaded machine disturbs both alike): back to back, and paced as an
// agent runs them, with a pause between commands (a model's turn) that is not
// counted. RATIO lines give each over os/exec (target <= 1.25x), and the
// context switches a command costs over os/exec's. Then the private memory
// of a running background job's supervisor.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	dsh := flag.String("dsh", "", "the dsh binary")
	before := flag.String("before", "", "a dsh binary to compare with (optional)")
	n := flag.Int("n", 100, "commands per round")
	rounds := flag.Int("rounds", 5, "rounds")
	pause := flag.Duration("pause", 100*time.Millisecond, "the pause between paced commands")
	flag.Parse()
	ws, err := os.MkdirTemp("", "cmdbench-")
	check(err)
	defer func() { _ = os.RemoveAll(ws) }()

	type side struct {
		name string
		run  func(n int, pause time.Duration) time.Duration
		best time.Duration
	}
	sides := []*side{{name: "os/exec", run: plain}}
	for _, b := range []struct{ name, path string }{{"dsh", *dsh}, {"dsh before", *before}} {
		if b.path == "" {
			continue
		}
		t := startTool(b.path, ws)
		defer t.close()
		t.call(`{"name":"bash","args":{"command":"true"}}`) // warm
		sides = append(sides, &side{name: b.name, run: t.commands})
	}
	for _, paced := range []time.Duration{0, *pause} {
		label, count := "back to back", *n
		if paced > 0 {
			label, count = "paced ("+paced.String()+" between commands)", max(*n/5, 10)
		}
		for _, s := range sides {
			s.best = 0
		}
		for range *rounds {
			for _, s := range sides {
				if d := s.run(count, paced); s.best == 0 || d < s.best {
					s.best = d
				}
			}
		}
		per := func(s *side) float64 { return float64(s.best.Microseconds()) / float64(count) / 1000 }
		fmt.Printf("%s:\n", label)
		for _, s := range sides {
			fmt.Printf("  %-11s %6.2f ms per `bash -c true`\n", s.name+":", per(s))
		}
		ratio := per(sides[1]) / per(sides[0])
		fmt.Printf("  per-command ratio dsh / os/exec: %.2f (target <= %.2f) %s\n", ratio, target, verdict(ratio <= target))
		name := map[bool]string{true: "command-paced/os-exec", false: "command-back-to-back/os-exec"}[paced > 0]
		fmt.Printf("RATIO %s %.2fx target <= %.2fx\n", name, ratio, target)
		if len(sides) > 2 {
			fmt.Printf("  per-command dsh now / before: %.2f ms / %.2f ms = %.2f\n", per(sides[1]), per(sides[2]), per(sides[1])/per(sides[2]))
			fmt.Printf("RATIO %s(before) %.2fx target <= %.2fx\n", name, per(sides[2])/per(sides[0]), target)
		}
	}
	// Voluntary context switches per command (the process's own and its
	// waited-for descendants', so dsh's supervisor and shells too): a count a
	// loaded machine disturbs far less than the time.
	perExec := switches(func() {
		for range *n {
			check(exec.Command("bash", "-c", "true").Run())
		}
	}) / float64(*n)
	fmt.Printf("voluntary context switches per command: os/exec %.1f", perExec)
	var perDsh []float64
	for _, b := range []struct{ name, path string }{{"dsh", *dsh}, {"dsh before", *before}} {
		if b.path == "" {
			continue
		}
		// A run of n commands less a run of none: what the commands cost.
		c := (switches(func() { toolRun(b.path, ws, *n) }) - switches(func() { toolRun(b.path, ws, 0) })) / float64(*n)
		perDsh = append(perDsh, c)
		fmt.Printf(", %s %.1f", b.name, c)
	}
	fmt.Println()
	fmt.Printf("RATIO command-context-switches/os-exec %.2fx target <= %.2fx\n", perDsh[0]/perExec, target)
	if len(perDsh) > 1 {
		fmt.Printf("RATIO command-context-switches/os-exec(before) %.2fx target <= %.2fx\n", perDsh[1]/perExec, target)
	}
	for _, b := range []struct{ name, path string }{{"dsh", *dsh}, {"dsh before", *before}} {
		if b.path == "" {
			continue
		}
		priv, rss, ok := jobMemory(b.path, ws)
		if !ok {
			fmt.Printf("%s: a running job has no supervisor of its own\n", b.name)
			continue
		}
		fmt.Printf("%s: a running job's supervisor: %.2f MiB private (RSS %.2f MiB)%s\n", b.name, priv, rss,
			map[bool]string{true: "", false: " " + "(target <= 3 MiB private) " + verdict(priv <= 3)}[b.name != "dsh"])
	}
}

// target is a command's cost over os/exec's (issue 39 item 5).
const target = 1.25

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cmdbench:", err)
		os.Exit(1)
	}
}

func plain(n int, pause time.Duration) time.Duration {
	var total time.Duration
	for range n {
		time.Sleep(pause)
		t0 := time.Now()
		check(exec.Command("bash", "-c", "true").Run())
		total += time.Since(t0)
	}
	return total
}

// switches runs f and returns the voluntary context switches (a thread
// waiting: for a child, a pipe, another thread) of this process and of the
// children it waited for meanwhile. The involuntary ones are the machine's
// other load.
func switches(f func()) float64 {
	count := func() int64 {
		var self, kids syscall.Rusage
		check(syscall.Getrusage(syscall.RUSAGE_SELF, &self))
		check(syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids))
		return self.Nvcsw + kids.Nvcsw
	}
	c0 := count()
	f()
	return float64(count() - c0)
}

// toolRun runs n commands through a `dsh tool --json -` of its own, to its exit.
func toolRun(dsh, ws string, n int) {
	t := startTool(dsh, ws)
	for range n {
		t.call(`{"name":"bash","args":{"command":"true"}}`)
	}
	t.close()
}

type tool struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startTool(dsh, ws string) *tool {
	cmd := exec.Command(dsh, "tool", "--json", "-")
	cmd.Dir = ws
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	check(err)
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	return &tool{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

func (t *tool) call(line string) string {
	_, err := io.WriteString(t.in, line+"\n")
	check(err)
	res, err := t.out.ReadString('\n')
	check(err)
	return res
}

func (t *tool) commands(n int, pause time.Duration) time.Duration {
	var total time.Duration
	for range n {
		time.Sleep(pause)
		t0 := time.Now()
		if r := t.call(`{"name":"bash","args":{"command":"true"}}`); !strings.Contains(r, `"exitCode":0`) {
			check(fmt.Errorf("the command failed: %s", r))
		}
		total += time.Since(t0)
	}
	return total
}

func (t *tool) close() {
	_ = t.in.Close()
	_ = t.cmd.Wait()
}

// jobMemory starts a background job and reads its supervisor's private memory
// and RSS, in MiB; ok is false when the build gives a job no supervisor of its own.
func jobMemory(dsh, ws string) (priv, rss float64, ok bool) {
	t := startTool(dsh, ws)
	defer t.close()
	t.call(`{"name":"bash","args":{"command":"sleep 30","run_in_background":true}}`)
	pid := t.cmd.Process.Pid
	// The job's supervisor is the one of dsh's with a child: an idle spare
	// or session supervisor has none.
	var sup int
	for deadline := time.Now().Add(5 * time.Second); sup == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		parents := map[string]string{} // pid → ppid
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, st := range stats {
			b, _ := os.ReadFile(st)
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i >= 0 {
				if f := strings.Fields(s[i+1:]); len(f) > 1 {
					parents[filepath.Base(filepath.Dir(st))] = f[1]
				}
			}
		}
		for _, parent := range parents {
			if parents[parent] != strconv.Itoa(pid) {
				continue
			}
			if cl, _ := os.ReadFile("/proc/" + parent + "/cmdline"); strings.HasPrefix(string(cl), "dsh-supervisor") {
				sup, _ = strconv.Atoi(parent)
			}
		}
	}
	if sup == 0 {
		return 0, 0, false
	}
	time.Sleep(200 * time.Millisecond) // settled
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", sup))
	check(err)
	kib := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) >= 2 {
			v, _ := strconv.ParseFloat(f[1], 64)
			kib[strings.TrimSuffix(f[0], ":")] = v
		}
	}
	t.call(`{"name":"job_kill","args":{"job_id":"job-1"}}`)
	return (kib["Private_Clean"] + kib["Private_Dirty"]) / 1024, kib["Rss"] / 1024, true
}
