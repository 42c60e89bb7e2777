// Command sizebench prints a dsh binary's size and the idle memory of its
// `dsh acp` — spawned, initialized, one session/new, then read from /proc —
// against the targets (issue: fast again): binary <= 80 MiB, idle RSS <= 30
// MiB. RSS is split into its anonymous part (heap, stacks: what the process
// allocated) and its file part (pages of the binary it touched), which is what
// tells a dependency's init work from its code.
//
//	sizebench [-runs 5] DSH [BEFORE]
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
)

const (
	maxBinary = 80 << 20 // bytes
	maxRSS    = 30 << 10 // KiB
)

func main() {
	runs := flag.Int("runs", 5, "runs; the median of each figure is reported")
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 {
		fmt.Fprintln(os.Stderr, "usage: sizebench [-runs N] DSH [BEFORE]")
		os.Exit(2)
	}
	if err := run(flag.Args(), *runs); err != nil {
		fmt.Fprintln(os.Stderr, "sizebench:", err)
		os.Exit(1)
	}
}

// figures of one binary; memory in KiB, the median of the runs.
type figures struct {
	binary                  int64
	rss, pss, anon, fileRSS int
}

func run(bins []string, runs int) error {
	tmp, err := os.MkdirTemp("", "sizebench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	// The binaries take turns, run for run, so that the page cache and the
	// machine's load treat them alike.
	ms := make([][][4]int, len(bins))
	for range runs {
		for i, bin := range bins {
			m, err := idle(bin, ws, filepath.Join(tmp, "sessions"))
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			ms[i] = append(ms[i], m)
		}
	}
	var all []figures
	for i, bin := range bins {
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		col := func(k int) int {
			xs := make([]int, len(ms[i]))
			for j, m := range ms[i] {
				xs[j] = m[k]
			}
			slices.Sort(xs)
			return xs[len(xs)/2]
		}
		all = append(all, figures{binary: st.Size(), rss: col(0), pss: col(1), anon: col(2), fileRSS: col(3)})
	}
	now := all[0]
	fmt.Printf("dsh binary and idle `dsh acp` (after initialize + session/new), medians of %d runs:\n", runs)
	mib := func(kib int) float64 { return float64(kib) / 1024 }
	row := func(what string, get func(figures) float64, target float64) {
		line := fmt.Sprintf("  %-14s %7.1f MiB", what, get(now))
		if len(all) > 1 {
			line += fmt.Sprintf("   before %7.1f MiB   ratio %.2f", get(all[1]), get(now)/get(all[1]))
		}
		if target > 0 {
			verdict := "ok"
			if get(now) > target {
				verdict = "MISSED"
			}
			line += fmt.Sprintf("   (target <= %.0f MiB) %s", target, verdict)
		}
		fmt.Println(line)
	}
	row("binary", func(f figures) float64 { return float64(f.binary) / (1 << 20) }, maxBinary>>20)
	row("idle RSS", func(f figures) float64 { return mib(f.rss) }, maxRSS>>10)
	row("idle PSS", func(f figures) float64 { return mib(f.pss) }, 0)
	row("  anonymous", func(f figures) float64 { return mib(f.anon) }, 0)
	row("  file", func(f figures) float64 { return mib(f.fileRSS) }, 0)
	return nil
}

// idle spawns `dsh acp`, initializes it, opens one session and returns its
// VmRSS, Pss, RssAnon and RssFile in KiB.
func idle(bin, ws, sessions string) ([4]int, error) {
	var m [4]int
	cmd := exec.Command(bin, "acp", "--session-dir", sessions)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return m, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return m, err
	}
	if err := cmd.Start(); err != nil {
		return m, err
	}
	defer func() {
		_ = in.Close() // stdin's end is how an editor ends the agent
		_ = cmd.Wait()
	}()
	r := bufio.NewReader(out)
	if err := call(in, r, 1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`); err != nil {
		return m, err
	}
	if err := call(in, r, 2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, ws)); err != nil {
		return m, err
	}
	pid := cmd.Process.Pid
	for i, f := range []struct{ file, key string }{
		{"status", "VmRSS:"}, {"smaps_rollup", "Pss:"}, {"status", "RssAnon:"}, {"status", "RssFile:"},
	} {
		if m[i], err = procKiB(pid, f.file, f.key); err != nil {
			return m, err
		}
	}
	return m, nil
}

// call sends one JSON-RPC request and reads until its response.
func call(w io.Writer, r *bufio.Reader, id int, method, params string) error {
	if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		return err
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		var resp struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != id {
			continue // a notification
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: %s", method, resp.Error)
		}
		return nil
	}
}

// procKiB reads the "key: N kB" line of /proc/PID/file.
func procKiB(pid int, file, key string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, errors.New("no " + key + " in /proc/" + strconv.Itoa(pid) + "/" + file)
}
