// Command concbench measures many sessions in one `dsh acp`, as an editor with
// many threads open uses it: N sessions opened and prompted at once (each prompt
// makes one read call, by the scripted provider), the wall time until every
// prompt is answered and the process's peak RSS; then, in a fresh process with
// GOGC=10 (so that RSS follows the live heap), the memory kept per finished
// session: RSS growth over 50 sessions opened and prompted one after another
// and left open. With -before it measures an earlier build the same way, in the
// same run, and prints now / before / ratio.
//
// With -separate, each session has a workspace of its own (a small project of
// 200 files), so each takes its first snapshot of a workspace: the wall time
// with checkpoints on, over the same with checkpoints off (git not on PATH),
// target <= 1.15x, printed as
//
//	RATIO conc_separate <value>x target <= 1.15x
//
//	concbench -dsh ./dsh [-before ./dsh-old] [-n 100] [-runs 3] [-separate]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	dsh := flag.String("dsh", "", "the dsh binary")
	before := flag.String("before", "", "an earlier dsh binary to compare with (optional)")
	n := flag.Int("n", 100, "concurrent sessions")
	runs := flag.Int("runs", 3, "runs of each measurement; the median is reported")
	separate := flag.Bool("separate", false, "each session in a workspace of its own, checkpoints on and off")
	flag.Parse()
	if *dsh == "" {
		fmt.Fprintln(os.Stderr, "usage: concbench -dsh BIN [-before BIN] [-n 100] [-separate]")
		os.Exit(2)
	}
	run := run
	if *separate {
		run = runSeparate
	}
	if err := run(*dsh, *before, *n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "concbench:", err)
		os.Exit(1)
	}
}

type figures struct {
	wall time.Duration
	peak int // KiB
	kept int // KiB per session
}

func run(dsh, before string, n, runs int) error {
	tmp, err := os.MkdirTemp("", "concbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Repeat("a line of text\n", 20)), 0o644); err != nil {
		return err
	}
	script := filepath.Join(tmp, "script.json")
	if err := writeScript(script, 2*n+200); err != nil {
		return err
	}
	bins := []string{dsh}
	if before != "" {
		bins = append(bins, before)
	}
	res := make([][]figures, len(bins))
	for r := range runs { // interleaved, so that both builds see the same machine
		for i, bin := range bins {
			f, err := measure(bin, tmp, ws, script, n, r)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			res[i] = append(res[i], f)
		}
	}
	med := func(fs []figures, pick func(figures) float64) float64 {
		var xs []float64
		for _, f := range fs {
			xs = append(xs, pick(f))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	rows := []struct {
		name, unit string
		pick       func(figures) float64
	}{
		{fmt.Sprintf("%d sessions: wall", n), "ms", func(f figures) float64 { return float64(f.wall) / 1e6 }},
		{fmt.Sprintf("%d sessions: peak RSS", n), "MiB", func(f figures) float64 { return float64(f.peak) / 1024 }},
		{"kept per finished session", "MiB", func(f figures) float64 { return float64(f.kept) / 1024 }},
	}
	fmt.Printf("dsh acp, %d concurrent sessions, medians of %d runs:\n", n, runs)
	fmt.Printf("  %-28s %12s %12s %8s\n", "", "now", "before", "ratio")
	for _, row := range rows {
		now := med(res[0], row.pick)
		line := fmt.Sprintf("  %-28s %8.2f %-3s", row.name, now, row.unit)
		if len(res) > 1 {
			b := med(res[1], row.pick)
			line += fmt.Sprintf(" %8.2f %-3s ×%.2f", b, row.unit, now/b)
		}
		fmt.Println(line)
	}
	return nil
}

// writeScript writes turns alternating a read call and a closing text: every
// prompt ends, whichever session takes which turn.
func writeScript(path string, turns int) error {
	type call struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type turn struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	var ts []turn
	for i := range turns / 2 {
		ts = append(ts, turn{ToolCalls: []call{{fmt.Sprintf("c%d", i), "read", map[string]any{"path": "a.txt"}}}}, turn{Text: "Read it."})
	}
	b, err := json.Marshal(map[string]any{"turns": ts})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func measure(bin, tmp, ws, script string, n, run int) (figures, error) {
	var f figures
	sessions := filepath.Join(tmp, fmt.Sprintf("sessions-%d-%s", run, filepath.Base(bin)))
	argv := []string{bin, "acp", "--session-dir", sessions, "--mode", "bypass", "--provider", "script", "--script", script}
	a, err := spawn(argv, nil)
	if err != nil {
		return f, err
	}
	if _, err := a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		_ = a.stop()
		return f, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- a.session(ws) })
	}
	wg.Wait()
	f.wall = time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			_ = a.stop()
			return f, err
		}
	}
	if f.peak, err = status(a.cmd.Process.Pid, "VmHWM"); err != nil {
		_ = a.stop()
		return f, err
	}
	if err := a.stop(); err != nil {
		return f, err
	}

	// Kept per session, in a fresh process whose heap RSS follows closely.
	a, err = spawn(argv, []string{"GOGC=10"})
	if err != nil {
		return f, err
	}
	defer func() { _ = a.stop() }()
	if _, err := a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return f, err
	}
	const kept = 50
	var first int
	for i := range kept + 1 {
		if err := a.session(ws); err != nil {
			return f, err
		}
		if i == 0 {
			if first, err = status(a.cmd.Process.Pid, "VmRSS"); err != nil {
				return f, err
			}
		}
	}
	last, err := status(a.cmd.Process.Pid, "VmRSS")
	if err != nil {
		return f, err
	}
	f.kept = max(0, last-first) / kept
	return f, nil
}

// status reads a field of /proc/PID/status in KiB.
func status(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no " + field)
}

// agent is a running `dsh acp` spoken to in raw JSON-RPC lines, by any number
// of goroutines at once.
type agent struct {
	cmd     *exec.Cmd
	mu      sync.Mutex // guards in, next and waiting
	in      io.WriteCloser
	next    int
	waiting map[int]chan reply
	done    chan struct{}
}

type reply struct {
	result json.RawMessage
	err    error
}

func spawn(argv, env []string) (*agent, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	a := &agent{cmd: cmd, in: in, waiting: map[int]chan reply{}, done: make(chan struct{})}
	go a.read(bufio.NewReaderSize(out, 1<<20))
	return a, nil
}

func (a *agent) read(r *bufio.Reader) {
	defer close(a.done)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		if strings.HasPrefix(string(line), `{"jsonrpc":"2.0","method":"session/update"`) {
			continue // most of what comes: no need to decode it
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" {
			continue
		}
		a.mu.Lock()
		ch := a.waiting[*m.ID]
		delete(a.waiting, *m.ID)
		a.mu.Unlock()
		if ch == nil {
			continue
		}
		if m.Error != nil {
			ch <- reply{err: fmt.Errorf("%s", m.Error)}
		} else {
			ch <- reply{result: m.Result}
		}
	}
}

func (a *agent) call(method, params string) (json.RawMessage, error) {
	ch := make(chan reply, 1)
	a.mu.Lock()
	a.next++
	id := a.next
	a.waiting[id] = ch
	_, err := fmt.Fprintf(a.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-a.done:
		return nil, fmt.Errorf("%s: the agent exited", method)
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("%s: no answer", method)
	}
}

// session opens a session and prompts it once.
func (a *agent) session(ws string) error {
	res, err := a.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws))
	if err != nil {
		return err
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	_, err = a.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"Read a.txt."}]}`, r.SessionID))
	return err
}

func (a *agent) stop() error {
	_ = a.in.Close()
	done := make(chan struct{})
	go func() {
		_ = a.cmd.Wait() // a kill by the timeout below is reported as such
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
		return errors.New("the agent did not exit after stdin closed")
	}
}

// runSeparate is the -separate case: n sessions at once, each in a workspace
// of its own, for this build with checkpoints on and off, and the build
// before with them on; wall times, medians of runs interleaved.
func runSeparate(dsh, before string, n, runs int) error {
	tmp, err := os.MkdirTemp("", "concbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		return err
	}
	script := filepath.Join(tmp, "script.json")
	if err := writeScript(script, 2*n+200); err != nil {
		return err
	}
	// Checkpoints off: a PATH with the shell and without git.
	nogit := filepath.Join(tmp, "nogit")
	if err := os.MkdirAll(nogit, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"bash", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			return err
		}
		if err := os.Symlink(p, filepath.Join(nogit, name)); err != nil {
			return err
		}
	}
	type config struct {
		name, bin string
		env       []string
	}
	configs := []config{{"now, checkpoints on", dsh, nil}, {"now, checkpoints off", dsh, []string{"PATH=" + nogit}}}
	if before != "" {
		configs = append(configs, config{"before, checkpoints on", before, nil})
	}
	walls := make([][]float64, len(configs))
	for r := range runs {
		for i, c := range configs {
			// New workspaces each time: every session's first snapshot is cold.
			wss := make([]string, n)
			for k := range wss {
				wss[k] = filepath.Join(tmp, fmt.Sprintf("ws-%d-%d-%d", r, i, k))
				if err := project(wss[k]); err != nil {
					return err
				}
			}
			sessions := filepath.Join(tmp, fmt.Sprintf("sessions-%d-%d", r, i))
			a, err := spawn([]string{c.bin, "acp", "--session-dir", sessions, "--mode", "bypass", "--provider", "script", "--script", script}, c.env)
			if err != nil {
				return err
			}
			if _, err := a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
				_ = a.stop()
				return err
			}
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for _, ws := range wss {
				wg.Go(func() { errs <- a.session(ws) })
			}
			wg.Wait()
			walls[i] = append(walls[i], float64(time.Since(start).Microseconds())/1000)
			close(errs)
			for err := range errs {
				if err != nil {
					_ = a.stop()
					return fmt.Errorf("%s: %w", c.name, err)
				}
			}
			if err := a.stop(); err != nil {
				return err
			}
		}
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	fmt.Printf("dsh acp, %d concurrent sessions in separate workspaces (200 files each), wall, medians of %d runs:\n", n, runs)
	for i, c := range configs {
		fmt.Printf("  %-28s %8.2f ms\n", c.name, med(walls[i]))
	}
	ratio := med(walls[0]) / med(walls[1])
	if before != "" {
		fmt.Printf("  %-28s %8.2fx\n", "before: on / now off", med(walls[2])/med(walls[1]))
	}
	fmt.Printf("RATIO conc_separate %.2fx target <= 1.15x\n", ratio)
	return nil
}

// project makes a small project at dir: 200 files in 10 directories.
func project(dir string) error {
	for d := range 10 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.go", f)), []byte(strings.Repeat("// a line of code\n", 40)), 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Repeat("a line of text\n", 20)), 0o644)
}
