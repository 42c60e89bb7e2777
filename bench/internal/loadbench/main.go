// Command loadbench measures session/load through a real `dsh acp`: the
// latency of loading a log of -calls calls of every built-in tool (median of
// -runs), and the peak RSS of loading a log of about -big MB made of
// -result-byte tool results. It prints each as now / target, and, with
// -before, the mixed load of that binary too, interleaved, and the ratios.
// The floor is a bare decode of the mixed log (session.Scan, in this
// process, interleaved too): RATIO lines give each load's latency over it
// (issue 39: <= 1.3x).
//
//	loadbench -dsh ./dsh [-before ./dsh-old] [-runs 5] [-calls 10000] [-big 500] [-result 4194304]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dsh-dev/dsh/bench/internal/acpload"
	"github.com/dsh-dev/dsh/internal/session"
)

// The targets (issue 20 item 3, issue 19 item 9, issue 39 item 4).
const (
	loadTarget   = 300 * time.Millisecond
	rssTarget    = 100 << 20
	decodeTarget = 1.3 // load / bare decode
)

func main() {
	dsh := flag.String("dsh", "", "the dsh binary")
	before := flag.String("before", "", "a dsh binary to compare with (optional)")
	runs := flag.Int("runs", 5, "loads of the mixed log; the median is reported")
	calls := flag.Int("calls", 10000, "tool calls in the mixed log")
	big := flag.Int("big", 500, "size in MB of the log of large results (0: skip)")
	result := flag.Int("result", 4<<20, "bytes of each large result")
	flag.Parse()
	if *dsh == "" {
		fmt.Fprintln(os.Stderr, "usage: loadbench -dsh BIN [-runs N] [-calls N] [-big MB] [-result BYTES]")
		os.Exit(2)
	}
	if err := run(*dsh, *before, *runs, *calls, *big, *result); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func run(dsh, before string, runs, calls, big, result int) error {
	tmp, err := os.MkdirTemp("", "loadbench-")
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
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	if calls > 0 {
		id, err := acpload.Mixed(ws, sessions, calls)
		if err != nil {
			return fmt.Errorf("writing the %d-call log: %w", calls, err)
		}
		type figures struct {
			lats, cpus []time.Duration
			rss        int64
		}
		bins := []string{dsh}
		if before != "" {
			bins = append(bins, before)
		}
		figs := make([]figures, len(bins))
		var decodes []time.Duration
		for range runs {
			t0 := time.Now()
			if err := session.Scan(filepath.Join(sessions, id+".jsonl"), func(session.Record) error { return nil }); err != nil {
				return fmt.Errorf("decoding the log: %w", err)
			}
			decodes = append(decodes, time.Since(t0))
			for i, bin := range bins { // interleaved: a loaded machine disturbs both alike
				st, err := acpload.LoadStats(bin, ws, sessions, id)
				if err != nil {
					return err
				}
				f := &figs[i]
				f.lats, f.cpus = append(f.lats, st.Latency), append(f.cpus, st.CPU)
				f.rss = max(f.rss, st.PeakRSS)
			}
		}
		median := func(d []time.Duration) time.Duration {
			slices.Sort(d)
			return d[len(d)/2]
		}
		lat, cpu := median(figs[0].lats), median(figs[0].cpus)
		fmt.Printf("session/load, %d mixed calls (median of %d): %7.1f ms / %v target  %s  (CPU %.0f ms, peak RSS %.1f MiB)\n",
			calls, runs, float64(lat)/1e6, loadTarget, verdict(lat <= loadTarget), float64(cpu)/1e6, float64(figs[0].rss)/(1<<20))
		dec := median(decodes)
		fmt.Printf("  a bare decode of the log (session.Scan, median of %d): %.1f ms\n", runs, float64(dec)/1e6)
		fmt.Printf("RATIO session-load/decode %.2fx target <= %.2fx\n", float64(lat)/float64(dec), decodeTarget)
		if before != "" {
			blat, bcpu := median(figs[1].lats), median(figs[1].cpus)
			fmt.Printf("  before: %7.1f ms (CPU %.0f ms, peak RSS %.1f MiB); now / before: latency ×%.2f, CPU ×%.2f\n",
				float64(blat)/1e6, float64(bcpu)/1e6, float64(figs[1].rss)/(1<<20), float64(lat)/float64(blat), float64(cpu)/float64(bcpu))
			fmt.Printf("RATIO session-load/decode(before) %.2fx target <= %.2fx\n", float64(blat)/float64(dec), decodeTarget)
		}
	}
	if big > 0 {
		id, size, err := acpload.Big(sessions, ws, int64(big)*1_000_000, result)
		if err != nil {
			return fmt.Errorf("writing the %d MB log: %w", big, err)
		}
		lat, rss, err := acpload.Load(dsh, ws, sessions, id)
		if err != nil {
			return err
		}
		fmt.Printf("session/load, %.0f MB log of %.0f KB results: peak RSS %6.1f MiB / %d MiB target  %s  (%.0f ms)\n",
			float64(size)/1e6, float64(result)/1e3, float64(rss)/(1<<20), rssTarget>>20, verdict(rss <= rssTarget), float64(lat)/1e6)
	}
	return nil
}
