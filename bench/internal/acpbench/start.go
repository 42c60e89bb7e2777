package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// earlier build, of the floor (a minimal Go agent) and, if not "", of the
// floor linked with dsh's dependencies; session/new in that fresh process and
// its idle RSS; and what creating and syncing a log costs on the sessions'
// disk. It prints a table and one RATIO line per target.
func start(dsh, before, floor, depFloor string, runs int) error {
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
	type subject struct {
		name   string
		argv   []string
		stderr io.Writer
		runs   []freshFigs
	}
	subjects := []*subject{
		{name: "now", argv: []string{dsh, "acp", "--session-dir", sessions}, stderr: os.Stderr},
		{name: "before", argv: []string{before, "acp", "--session-dir", sessions}, stderr: os.Stderr},
		{name: "floor", argv: []string{floor}, stderr: io.Discard}, // it logs its connection's end
	}
	if depFloor != "" {
		subjects = append(subjects, &subject{name: "deps floor", argv: []string{depFloor}, stderr: io.Discard})
	}
	var syncs []time.Duration
	for i := range runs {
		// Each run starts with the next subject: none always follows the same one.
		for k := range subjects {
			b := subjects[(i+k)%len(subjects)]
			f, err := fresh(b.argv, b.stderr, ws)
			if err != nil {
				return fmt.Errorf("%s: %w", b.argv[0], err)
			}
			f.newSessCPU -= f.initCPU
			b.runs = append(b.runs, f)
		}
		d, err := logSync(sessions, i)
		if err != nil {
			return err
		}
		syncs = append(syncs, d)
	}
	// med is the median of one figure of a subject's runs.
	med := func(b *subject, fig func(freshFigs) float64) float64 {
		xs := make([]float64, len(b.runs))
		for i, f := range b.runs {
			xs[i] = fig(f)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	fmt.Printf("dsh acp start, fresh processes, medians of %d runs interleaved (before: %s):\n", runs, filepath.Base(before))
	fmt.Printf("  %-30s", "")
	for _, b := range subjects {
		fmt.Printf(" %12s", b.name)
	}
	fmt.Printf(" %10s %10s\n", "now/floor", "now/before")
	row := func(what, unit string, fig func(freshFigs) float64) {
		fmt.Printf("  %-30s", what)
		for _, b := range subjects {
			fmt.Printf(" %8.2f %-3s", med(b, fig), unit)
		}
		now, old, flo := med(subjects[0], fig), med(subjects[1], fig), med(subjects[2], fig)
		fmt.Printf(" %10s %10s\n", fmt.Sprintf("×%.2f", now/flo), fmt.Sprintf("×%.2f", now/old))
	}
	msOf := func(d time.Duration) float64 { return ms(d) }
	row("spawn → initialize", "ms", func(f freshFigs) float64 { return msOf(f.init) })
	row("session/new (fresh process)", "ms", func(f freshFigs) float64 { return msOf(f.newSess) })
	row("CPU, spawn → initialize", "ms", func(f freshFigs) float64 { return msOf(f.initCPU) })
	row("CPU, session/new", "ms", func(f freshFigs) float64 { return msOf(f.newSessCPU) })
	row("idle RSS (initialize + new)", "MiB", func(f freshFigs) float64 { return float64(f.rss) / 1024 })
	row("idle PSS (initialize + new)", "MiB", func(f freshFigs) float64 { return float64(f.pss) / 1024 })
	sync := ms(median(syncs))
	fmt.Printf("  %-30s %8.2f ms (create, write, fsync the file and its directory)\n", "a new log's fsync", sync)
	if depFloor != "" {
		fmt.Println("  (deps floor: the floor linked with the libraries dsh links; it answers session/new as initialize)")
	}
	fmt.Println()
	now, old, flo := subjects[0], subjects[1], subjects[2]
	initOf := func(f freshFigs) float64 { return msOf(f.init) }
	newOf := func(f freshFigs) float64 { return msOf(f.newSess) }
	rssOf := func(f freshFigs) float64 { return float64(f.rss) / 1024 }
	fmt.Printf("RATIO start-initialize %.2fx target <= %.1fx\n", med(now, initOf)/med(flo, initOf), targetInitRatio)
	fmt.Printf("RATIO idle-rss-MiB %.1f target <= %.0f\n", med(now, rssOf), targetIdleRSS)
	fmt.Printf("RATIO session-new-beyond-fsync-ms %.2f target <= %.0f\n", med(now, newOf)-sync, targetNewBeyond)
	fmt.Printf("RATIO start-initialize-vs-before %.2fx target <= 1.0x\n", med(now, initOf)/med(old, initOf))
	fmt.Printf("RATIO session-new-vs-before %.2fx target <= 1.0x\n", med(now, newOf)/med(old, newOf))
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
