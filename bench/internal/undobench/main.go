// Command undobench measures a checkpoint (a snapshot of the workspace into
// dsh's shadow store) on a copy of a large tree that is a git repository, as a
// ratio to `git stash create` on the same tree with the same change, and the
// latency of an undo (plan, write, snapshot after) of a prompt that edited,
// created and deleted files. Medians of -runs; the first (cold) snapshot of a
// new store is reported on its own.
//
//	undobench -src $(go env GOROOT)/src [-runs 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dsh-dev/dsh/internal/checkpoint"
)

func main() {
	src := flag.String("src", "", "the tree to copy (Go's own src)")
	runs := flag.Int("runs", 10, "runs per measurement; the median is reported")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "usage: undobench -src DIR [-runs N]")
		os.Exit(2)
	}
	if err := run(*src, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "undobench:", err)
		os.Exit(1)
	}
}

func run(src string, runs int) error {
	tmp, err := os.MkdirTemp("", "undobench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a leftover temp dir is harmless
	ws := filepath.Join(tmp, "ws")
	if err := sh(tmp, "cp", "-r", src, ws); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "src"}} {
		if err := sh(ws, "git", args...); err != nil {
			return err
		}
	}
	files, err := sh1(ws, "git", "ls-files")
	if err != nil {
		return err
	}
	tracked := strings.Split(strings.TrimSpace(files), "\n")
	fmt.Printf("tree: %s, %d tracked files\n", src, len(tracked))
	// Each run dirties the same few files, as a prompt would.
	dirty := func(i int) error {
		for _, f := range tracked[:5] {
			if err := appendLine(filepath.Join(ws, f), fmt.Sprintf("// run %d\n", i)); err != nil {
				return err
			}
		}
		return nil
	}

	// The bench measures the cost, not the bound: a busy machine must not cut it.
	st, err := checkpoint.Open(filepath.Join(tmp, "store"), ws, "bench", checkpoint.Options{Timeout: 10 * time.Minute})
	if err != nil {
		return err
	}
	ctx := context.Background()
	t := time.Now()
	if _, err := st.Snapshot(ctx); err != nil {
		return err
	}
	cold := time.Since(t)
	// Interleaved, so that a busy machine weighs on both alike.
	var stash, snaps []time.Duration
	for i := range runs {
		if err := dirty(i); err != nil {
			return err
		}
		t := time.Now()
		if err := sh(ws, "git", "stash", "create"); err != nil {
			return err
		}
		stash = append(stash, time.Since(t))
		t = time.Now()
		if _, err := st.Snapshot(ctx); err != nil {
			return err
		}
		snaps = append(snaps, time.Since(t))
	}

	var undos []time.Duration
	for i := range runs {
		before, err := st.Snapshot(ctx)
		if err != nil {
			return err
		}
		// The prompt: ten edits, a created file, a deleted one.
		for _, f := range tracked[10:20] {
			if err := appendLine(filepath.Join(ws, f), fmt.Sprintf("// prompt %d\n", i)); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("gen%d.go", i)), []byte("package gen\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(ws, tracked[30]), filepath.Join(tmp, "moved")); err != nil {
			return err
		}
		after, err := st.Snapshot(ctx)
		if err != nil {
			return err
		}
		t := time.Now()
		now, err := st.Snapshot(ctx)
		if err != nil {
			return err
		}
		plan, err := st.Plan(ctx, now.Tree, []checkpoint.Span{{Before: before.Tree, After: after.Tree}})
		if err != nil {
			return err
		}
		if _, err := st.Apply(plan, false); err != nil {
			return err
		}
		if _, err := st.Snapshot(ctx); err != nil {
			return err
		}
		undos = append(undos, time.Since(t))
		if len(plan.Files) != 12 {
			return fmt.Errorf("the undo restored %d files, want 12", len(plan.Files))
		}
	}

	ms, mc := median(stash), median(snaps)
	fmt.Printf("git stash create:        %7.1f ms (median of %d)\n", ms, runs)
	fmt.Printf("checkpoint (warm index): %7.1f ms (median of %d)\n", mc, runs)
	fmt.Printf("checkpoint / stash:      %7.2fx (target <= 1.5x)\n", mc/ms)
	fmt.Printf("first checkpoint (cold): %7.1f ms (hashes every file once)\n", ms2(cold))
	fmt.Printf("undo of a prompt:        %7.1f ms (snapshot, plan, write 12 files, snapshot; median of %d)\n", median(undos), runs)
	return nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms2(s[len(s)/2])
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sh(dir, name string, args ...string) error {
	_, err := sh1(dir, name, args...)
	return err
}

func sh1(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %v: %w: %s", name, args, err, out)
	}
	return string(out), nil
}
