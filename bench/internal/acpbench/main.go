// Command acpbench measures an ACP agent's startup: spawn → initialize
// response, session/new and session/load latency, and idle RSS and PSS after
// initialize + session/new. It speaks raw JSON-RPC lines over the agent's stdio
// so that nothing but the agent is measured. The session loaded is a written
// log of -calls calls of every built-in tool. It also times a one-shot
// `dsh tool read`. With -before it measures an earlier dsh build the same way,
// interleaved in the same run, and prints now / before / ratio; with -ref, a
// reference agent; with -before and -floor, fresh processes of both builds
// and of the floor (bench/start.sh), and the RATIO lines of their targets.
//
//	acpbench -dsh ./dsh [-before ./dsh-old] [-ref ./example-agent] [-floor ./example-agent [-depfloor ./depfloor]] [-runs 10] [-calls 10000]
package main

import (
	"bufio"
	"bytes"
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
	"time"

	"github.com/dsh-dev/dsh/bench/internal/acpload"
)

func main() {
	dsh := flag.String("dsh", "", "the dsh binary")
	before := flag.String("before", "", "an earlier dsh binary to compare with (optional)")
	ref := flag.String("ref", "", "a reference ACP agent binary (optional)")
	floor := flag.String("floor", "", "with -before: a minimal Go agent, the floor of start-up; prints the RATIO lines of a fresh process (optional)")
	depFloor := flag.String("depfloor", "", "with -floor: the floor linked with dsh's dependencies (bench/internal/depfloor), shown beside it (optional)")
	runs := flag.Int("runs", 10, "runs per measurement; the median is reported")
	calls := flag.Int("calls", 10000, "tool calls in the session that is loaded")
	flag.Parse()
	if *dsh == "" {
		fmt.Fprintln(os.Stderr, "usage: acpbench -dsh BIN [-before BIN] [-ref BIN] [-runs N]")
		os.Exit(2)
	}
	if *before != "" && *floor != "" {
		if err := start(*dsh, *before, *floor, *depFloor, *runs); err != nil {
			fmt.Fprintln(os.Stderr, "acpbench:", err)
			os.Exit(1)
		}
		return
	}
	if *before != "" {
		if err := compare(*dsh, *before, *runs, *calls); err != nil {
			fmt.Fprintln(os.Stderr, "acpbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dsh, *ref, *runs, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "acpbench:", err)
		os.Exit(1)
	}
}

func run(dsh, ref string, runs, calls int) error {
	tmp, err := os.MkdirTemp("", "acpbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ws := filepath.Join(tmp, "ws")
	sessions := filepath.Join(tmp, "sessions")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return err
	}

	id, err := acpload.Mixed(ws, sessions, calls)
	if err != nil {
		return fmt.Errorf("generating the %d-call session: %w", calls, err)
	}
	dshCmd := []string{dsh, "acp", "--session-dir", sessions}
	d, err := measure(dshCmd, os.Stderr, ws, runs, id)
	if err != nil {
		return fmt.Errorf("dsh: %w", err)
	}
	var r *figures
	if ref != "" {
		// The reference logs its connection's end to stderr: not worth showing.
		if r, err = measure([]string{ref}, io.Discard, ws, runs, ""); err != nil {
			return fmt.Errorf("reference agent: %w", err)
		}
	}

	fmt.Printf("dsh acp, medians of %d runs:\n", runs)
	report("spawn → initialize", d.init, 15*time.Millisecond, r, func(f *figures) time.Duration { return f.init })
	report("session/new", d.newSess, 20*time.Millisecond, r, func(f *figures) time.Duration { return f.newSess })
	report(fmt.Sprintf("session/load (%d calls)", calls), d.load, 50*time.Millisecond, nil, nil)
	verdict := "ok"
	if d.rss > 16<<10 {
		verdict = "MISSED"
	}
	line := fmt.Sprintf("  %-26s %7.1f MiB (target <= 16 MiB) %s", "idle RSS", float64(d.rss)/1024, verdict)
	if r != nil {
		line += fmt.Sprintf("   reference %.1f MiB, ratio %.2f", float64(r.rss)/1024, float64(d.rss)/float64(r.rss))
	}
	fmt.Println(line)
	return nil
}

func report(what string, got, target time.Duration, ref *figures, pick func(*figures) time.Duration) {
	verdict := "ok"
	if got > target {
		verdict = "MISSED"
	}
	line := fmt.Sprintf("  %-26s %7.2f ms  (target <= %v) %s", what, ms(got), target, verdict)
	if ref != nil {
		line += fmt.Sprintf("   reference %.2f ms, ratio %.2f", ms(pick(ref)), float64(got)/float64(pick(ref)))
	}
	fmt.Println(line)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// figures are the medians of one agent.
type figures struct {
	init, newSess, load time.Duration
	rss, pss            int // KiB
}

// measure starts the agent runs times. Each run times spawn → initialize and
// session/new, reads VmRSS, and, with a session id, times session/load in the
// same process after closing the new session.
func measure(argv []string, stderr io.Writer, ws string, runs int, loadID string) (*figures, error) {
	var inits, news, loads []time.Duration
	var rss, pss []int
	for range runs {
		start := time.Now()
		a, err := spawn(argv, stderr)
		if err != nil {
			return nil, err
		}
		if _, err := a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
			_ = a.stop()
			return nil, err
		}
		inits = append(inits, time.Since(start))

		t := time.Now()
		res, err := a.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws))
		if err != nil {
			_ = a.stop()
			return nil, err
		}
		news = append(news, time.Since(t))
		kib, err := vmRSS(a.cmd.Process.Pid)
		if err != nil {
			_ = a.stop()
			return nil, err
		}
		rss = append(rss, kib)
		if kib, err = pssOf(a.cmd.Process.Pid); err != nil {
			_ = a.stop()
			return nil, err
		}
		pss = append(pss, kib)

		if loadID != "" {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(res, &r); err != nil {
				_ = a.stop()
				return nil, err
			}
			if _, err := a.call("session/close", fmt.Sprintf(`{"sessionId":%q}`, r.SessionID)); err != nil {
				_ = a.stop()
				return nil, err
			}
			t := time.Now()
			if _, err := a.call("session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, loadID, ws)); err != nil {
				_ = a.stop()
				return nil, err
			}
			loads = append(loads, time.Since(t))
		}
		if err := a.stop(); err != nil {
			return nil, err
		}
	}
	f := &figures{init: median(inits), newSess: median(news), rss: median(rss), pss: median(pss)}
	if len(loads) > 0 {
		f.load = median(loads)
	}
	return f, nil
}

// pssOf reads a process's proportional set size in KiB.
func pssOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pss:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no Pss")
}

func median[T int | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// vmRSS reads a process's resident set in KiB.
func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no VmRSS")
}

// agent is a running ACP agent spoken to in raw JSON-RPC lines.
type agent struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func spawn(argv []string, stderr io.Writer) (*agent, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
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
	return &agent{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// call sends a request and reads until its response, skipping notifications.
func (a *agent) call(method, params string) (json.RawMessage, error) {
	a.next++
	if _, err := fmt.Fprintf(a.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", a.next, method, params); err != nil {
		return nil, err
	}
	for {
		line, err := a.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		// A message with a method is skipped below: it is not decoded, so
		// that a load's tens of thousands of updates time dsh, not this client.
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method"`)) {
			continue
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: not JSON: %q", method, line)
		}
		if m.ID == nil || *m.ID != a.next || m.Method != "" {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m.Result, nil
	}
}

// stop closes stdin, as an editor does, and waits for the agent to exit.
func (a *agent) stop() error {
	_ = a.in.Close()
	done := make(chan struct{})
	go func() {
		_ = a.cmd.Wait() // an agent killed by the timeout below is reported as such
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
		return errors.New("the agent did not exit after stdin closed")
	}
}
