// Command scalebench measures how dsh's cost grows with a session. It grows one
// session, through the session host and the scripted provider, by prompts of
// 40 read calls each, and reports the median cost of a prompt once the session
// holds 100, 1 000 and 10 000 calls, and their ratio. Then it measures, through
// the real `dsh acp` binary, session/load of that session and of a generated
// log of about -big MB: latency and the process's peak RSS.
//
//	scalebench -dsh ./dsh [-calls 10000] [-big 500]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/bench/internal/acpload"
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
)

const perPrompt = 40 // calls per prompt, as in the measurement

func main() {
	dsh := flag.String("dsh", "", "the dsh binary, for session/load")
	calls := flag.Int("calls", 10000, "grow the session to this many calls")
	big := flag.Int("big", 500, "size in MB of the generated log to load (0: skip)")
	lines := flag.Int("lines", 10, "lines of the file each call reads")
	flag.Parse()
	if *dsh == "" {
		fmt.Fprintln(os.Stderr, "usage: scalebench -dsh BIN [-calls N] [-big MB]")
		os.Exit(2)
	}
	if err := run(*dsh, *calls, *big, *lines); err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
}

func run(dsh string, calls, bigMB, lines int) error {
	tmp, err := os.MkdirTemp("", "scalebench-")
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
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Repeat("a line of text\n", lines)), 0o644); err != nil {
		return err
	}

	marks := []int{100, 1000, calls}
	costs, path, err := grow(ws, sessions, calls+5*perPrompt, marks)
	if err != nil {
		return err
	}
	fmt.Printf("per-prompt cost (%d reads of a %d-line file, median of 5 prompts):\n", perPrompt, lines)
	for _, m := range marks {
		fmt.Printf("  at %6d calls: %8.2f ms\n", m, ms(costs[m]))
	}
	fmt.Printf("  ratio %d/%d: %.2f (target <= 1.5)\n", calls, marks[0], float64(costs[calls])/float64(costs[marks[0]]))

	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	lat, rss, err := acpload.Load(dsh, ws, sessions, id)
	if err != nil {
		return err
	}
	fi, _ := os.Stat(path)
	fmt.Printf("session/load of %d calls (%.1f MB): %.1f ms, peak RSS %.1f MiB (targets <= 300 ms, <= 60 MiB)\n",
		calls, float64(fi.Size())/1e6, ms(lat), float64(rss)/(1<<20))

	if bigMB > 0 {
		// Results of a capped command's size, then of a large fetched page or a
		// job's whole buffer.
		for _, result := range []int{30_000, 4 << 20} {
			bigID, size, err := acpload.Big(sessions, ws, int64(bigMB)*1_000_000, result)
			if err != nil {
				return err
			}
			lat, rss, err := acpload.Load(dsh, ws, sessions, bigID)
			if err != nil {
				return err
			}
			fmt.Printf("session/load of a %.0f MB log of %.0f KB results: %.1f ms, peak RSS %.1f MiB (target: bounded, <= 100 MiB)\n",
				float64(size)/1e6, float64(result)/1e3, ms(lat), float64(rss)/(1<<20))
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// grow runs prompts of perPrompt reads until the session holds total calls, and
// returns, for each mark, the median duration of the 5 prompts that start once
// the session holds at least that many calls.
func grow(ws, sessions string, total int, marks []int) (map[int]time.Duration, string, error) {
	prompts := (total + perPrompt - 1) / perPrompt
	var turns []script.Turn
	for p := range prompts {
		var tc []script.ToolCall
		for i := range perPrompt {
			tc = append(tc, script.ToolCall{ID: fmt.Sprintf("p%d-c%d", p, i), Name: "read", Args: []byte(`{"path":"a.txt"}`)})
		}
		turns = append(turns, script.Turn{ToolCalls: tc}, script.Turn{Text: "Read them."})
	}
	js, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		return nil, "", err
	}
	sp, err := script.Parse(js)
	if err != nil {
		return nil, "", err
	}
	// Compaction is off: this measures the cost of the whole history.
	s, err := host.Create(host.Options{SessionDir: sessions, Root: ws, Mode: agent.ModeBypass, CompactAt: 2,
		Provider: func() (provider.Provider, error) { return sp, nil }})
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = s.Close() }()
	// A consumer folds the stream, as every UI does.
	sub := s.Subscribe(func(host.Event) {})
	defer sub.Close()
	samples := map[int][]time.Duration{}
	done := 0
	for p := range prompts {
		start := time.Now()
		stop, err := s.Prompt(context.Background(), fmt.Sprintf("prompt %d", p))
		if err != nil {
			return nil, "", err
		}
		if stop != agent.StopEndTurn {
			return nil, "", fmt.Errorf("prompt %d ended %s", p, stop)
		}
		d := time.Since(start)
		for _, m := range marks {
			if done >= m && len(samples[m]) < 5 {
				samples[m] = append(samples[m], d)
			}
		}
		done += perPrompt
		if p%50 == 0 {
			fmt.Fprintf(os.Stderr, "\r%d calls…", done)
		}
	}
	fmt.Fprintln(os.Stderr)
	out := map[int]time.Duration{}
	for _, m := range marks {
		if len(samples[m]) == 0 {
			return nil, "", fmt.Errorf("the session never reached %d calls", m)
		}
		out[m] = median(samples[m])
	}
	return out, s.Path(), nil
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
