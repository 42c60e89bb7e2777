package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Targets of issue 39 for a fresh process.
const (
	targetInitRatio = 2.5  // spawn → initialize, × the floor's
	targetIdleRSS   = 20.0 // MiB after initialize + session/new
	targetNewBeyond = 2.0  // ms of session/new beyond the log's fsync
)

// start measures, run for run in turn, spawn → initialize of dsh, of an
// earlier build and of the floor (a minimal Go agent), dsh's session/new in
// that fresh process and its idle RSS, and what creating and syncing a log
// costs on the sessions' disk; it prints a table and one RATIO line per target.
func start(dsh, before, floor string, runs int) error {
	tmp, err := os.MkdirTemp("", "acpbench-start-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ws, sessions := filepath.Join(tmp, "ws"), filepath.Join(tmp, "sessions")
	for _, d := range []string{ws, sessions} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return err
	}
	type agentFigs struct {
		init, newSess       []time.Duration
		initCPU, newSessCPU []time.Duration
		rss, pss            []int
	}
	now, old, flo := &agentFigs{}, &agentFigs{}, &agentFigs{}
	var syncs []time.Duration
	type subject struct {
		argv   []string
		figs   *agentFigs
		stderr io.Writer
	}
	subjects := []subject{
		{[]string{dsh, "acp", "--session-dir", sessions}, now, os.Stderr},
		{[]string{before, "acp", "--session-dir", sessions}, old, os.Stderr},
		{[]string{floor}, flo, io.Discard}, // the floor logs its connection's end
	}
	for i := range runs {
		// Each run starts with the next subject: none always follows the same one.
		for k := range subjects {
			b := subjects[(i+k)%len(subjects)]
			f, err := fresh(b.argv, b.stderr, ws)
			if err != nil {
				return fmt.Errorf("%s: %w", b.argv[0], err)
			}
			b.figs.init = append(b.figs.init, f.init)
			b.figs.newSess = append(b.figs.newSess, f.newSess)
			b.figs.initCPU = append(b.figs.initCPU, f.initCPU)
			b.figs.newSessCPU = append(b.figs.newSessCPU, f.newSessCPU-f.initCPU)
			b.figs.rss = append(b.figs.rss, f.rss)
			b.figs.pss = append(b.figs.pss, f.pss)
		}
		d, err := logSync(sessions, i)
		if err != nil {
			return err
		}
		syncs = append(syncs, d)
	}
	mib := func(kib []int) float64 { return float64(median(kib)) / 1024 }
	fmt.Printf("dsh acp start, fresh processes, medians of %d runs interleaved (before: %s):\n", runs, filepath.Base(before))
	fmt.Printf("  %-34s %10s %10s %10s %12s %12s\n", "", "now", "before", "floor", "now/floor", "now/before")
	row := func(name, unit string, a, b, f float64) {
		r := func(x, y float64) string {
			if y == 0 {
				return "-"
			}
			return fmt.Sprintf("×%.2f", x/y)
		}
		fmt.Printf("  %-34s %6.2f %-3s %6.2f %-3s %6.2f %-3s %12s %12s\n", name, a, unit, b, unit, f, unit, r(a, f), r(a, b))
	}
	row("spawn → initialize", "ms", ms(median(now.init)), ms(median(old.init)), ms(median(flo.init)))
	row("session/new (fresh process)", "ms", ms(median(now.newSess)), ms(median(old.newSess)), ms(median(flo.newSess)))
	row("CPU, spawn → initialize", "ms", ms(median(now.initCPU)), ms(median(old.initCPU)), ms(median(flo.initCPU)))
	row("CPU, session/new", "ms", ms(median(now.newSessCPU)), ms(median(old.newSessCPU)), ms(median(flo.newSessCPU)))
	row("idle RSS (initialize + new)", "MiB", mib(now.rss), mib(old.rss), mib(flo.rss))
	row("idle PSS (initialize + new)", "MiB", mib(now.pss), mib(old.pss), mib(flo.pss))
	sync := ms(median(syncs))
	fmt.Printf("  %-34s %6.2f ms (create, write, fsync the file and its directory)\n", "a new log's fsync", sync)
	fmt.Println()
	initRatio := float64(median(now.init)) / float64(median(flo.init))
	fmt.Printf("RATIO start-initialize %.2fx target <= %.1fx\n", initRatio, targetInitRatio)
	fmt.Printf("RATIO idle-rss-MiB %.1f target <= %.0f\n", mib(now.rss), targetIdleRSS)
	fmt.Printf("RATIO session-new-beyond-fsync-ms %.2f target <= %.0f\n", ms(median(now.newSess))-sync, targetNewBeyond)
	fmt.Printf("RATIO start-initialize-vs-before %.2fx target <= 1.0x\n", float64(median(now.init))/float64(median(old.init)))
	fmt.Printf("RATIO session-new-vs-before %.2fx target <= 1.0x\n", float64(median(now.newSess))/float64(median(old.newSess)))
	return nil
}

// freshFigs are one fresh process's: wall times, the CPU time its threads
// had used by each answer (what a loaded machine does not blur), and its
// resident and proportional set in KiB.
type freshFigs struct {
	init, newSess, initCPU, newSessCPU time.Duration
	rss, pss                           int
}

// fresh spawns an agent and times spawn → initialize, then session/new in the
// same process, then reads its RSS and PSS and stops it.
func fresh(argv []string, stderr io.Writer, ws string) (f freshFigs, err error) {
	t := time.Now()
	a, err := spawn(argv, stderr)
	if err != nil {
		return f, err
	}
	defer func() {
		if serr := a.stop(); err == nil {
			err = serr
		}
	}()
	pid := a.cmd.Process.Pid
	if _, err = a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return f, err
	}
	f.init = time.Since(t)
	if f.initCPU, err = cpuOf(pid); err != nil {
		return f, err
	}
	t = time.Now()
	if _, err = a.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws)); err != nil {
		return f, err
	}
	f.newSess = time.Since(t)
	if f.newSessCPU, err = cpuOf(pid); err != nil {
		return f, err
	}
	if f.rss, err = vmRSS(pid); err != nil {
		return f, err
	}
	if f.pss, err = pssOf(pid); err != nil {
		return f, err
	}
	return f, nil
}

// cpuOf is the time a process's threads have run on a CPU so far
// (/proc/PID/task/*/schedstat, in nanoseconds).
func cpuOf(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// logSync is what creating a session log costs the disk, as session.Create
// does it: a new file, a header line, an fsync of the file and of its directory.
func logSync(dir string, i int) (time.Duration, error) {
	t := time.Now()
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("sync-%d.jsonl", i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	if _, err := f.WriteString(`{"type":"header","version":1,"sessionId":"x","cwd":"` + strings.Repeat("x", 400) + "\"}\n"); err != nil {
		_ = f.Close()
		return 0, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return 0, err
	}
	return time.Since(t), nil
}
