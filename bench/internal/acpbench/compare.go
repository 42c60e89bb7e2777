package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/dsh-dev/dsh/bench/internal/acpload"
)

// compare measures dsh and an earlier build, run for run in turn, and prints
// now / before / ratio.
func compare(dsh, before string, runs, calls int) error {
	tmp, err := os.MkdirTemp("", "acpbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ws, sessions := filepath.Join(tmp, "ws"), filepath.Join(tmp, "sessions")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if ws, err = filepath.EvalSymlinks(ws); err != nil {
		return err
	}
	id, err := acpload.Mixed(ws, sessions, calls)
	if err != nil {
		return fmt.Errorf("writing the %d-call log: %w", calls, err)
	}
	var now, old []figures
	var nowTool, oldTool []time.Duration
	for range runs {
		for _, b := range []struct {
			bin   string
			figs  *[]figures
			tools *[]time.Duration
		}{{dsh, &now, &nowTool}, {before, &old, &oldTool}} {
			f, err := measure([]string{b.bin, "acp", "--session-dir", sessions}, os.Stderr, ws, 1, id)
			if err != nil {
				return fmt.Errorf("%s: %w", b.bin, err)
			}
			*b.figs = append(*b.figs, *f)
			d, err := oneShot(b.bin, ws)
			if err != nil {
				return fmt.Errorf("%s tool read: %w", b.bin, err)
			}
			*b.tools = append(*b.tools, d)
		}
	}
	pick := func(fs []figures, f func(figures) float64) float64 {
		var xs []float64
		for _, x := range fs {
			xs = append(xs, f(x))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	fmt.Printf("dsh acp and dsh tool, medians of %d runs, interleaved:\n", runs)
	fmt.Printf("  %-28s %12s %12s %8s\n", "", "now", "before", "ratio")
	row := func(name, unit string, a, b float64) {
		fmt.Printf("  %-28s %8.2f %-3s %8.2f %-3s ×%.2f\n", name, a, unit, b, unit, a/b)
	}
	dur := func(f figures, d time.Duration) float64 { return float64(d) / 1e6 }
	row("spawn → initialize", "ms", pick(now, func(f figures) float64 { return dur(f, f.init) }), pick(old, func(f figures) float64 { return dur(f, f.init) }))
	row("session/new", "ms", pick(now, func(f figures) float64 { return dur(f, f.newSess) }), pick(old, func(f figures) float64 { return dur(f, f.newSess) }))
	row("idle RSS", "MiB", pick(now, func(f figures) float64 { return float64(f.rss) / 1024 }), pick(old, func(f figures) float64 { return float64(f.rss) / 1024 }))
	row("idle PSS", "MiB", pick(now, func(f figures) float64 { return float64(f.pss) / 1024 }), pick(old, func(f figures) float64 { return float64(f.pss) / 1024 }))
	row(fmt.Sprintf("session/load (%d calls)", calls), "ms", pick(now, func(f figures) float64 { return dur(f, f.load) }), pick(old, func(f figures) float64 { return dur(f, f.load) }))
	row("one-shot dsh tool read", "ms", float64(median(nowTool))/1e6, float64(median(oldTool))/1e6)
	a, errA := os.Stat(dsh)
	b, errB := os.Stat(before)
	if errA == nil && errB == nil {
		row("binary", "MiB", float64(a.Size())/(1<<20), float64(b.Size())/(1<<20))
	}
	return nil
}

// oneShot times `dsh tool read` of a small file, spawn to exit.
func oneShot(bin, ws string) (time.Duration, error) {
	cmd := exec.Command(bin, "tool", "read", `{"path":"handler.go","limit":5}`)
	cmd.Dir = ws
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	return time.Since(start), nil
}
