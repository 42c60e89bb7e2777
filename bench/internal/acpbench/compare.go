package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
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
	id, err := mixedLog(ws, sessions, calls)
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

// mixedLog writes a session log of n calls into dir: each built-in tool is run
// once for real in ws, and its call and result repeated under fresh ids.
func mixedLog(ws, dir string, n int) (string, error) {
	var src strings.Builder
	for i := range 120 {
		fmt.Fprintf(&src, "\tif err := step(ctx, %d); err != nil { return err }\n", i)
	}
	if err := os.WriteFile(filepath.Join(ws, "handler.go"), []byte("package pkg\n\n"+src.String()), 0o644); err != nil {
		return "", err
	}
	w, err := workspace.New(ws, false)
	if err != nil {
		return "", err
	}
	reg := toolset.New(toolset.Options{})
	ts := tool.NewSession("bench", w)
	defer func() { _ = ts.Close() }()
	specs := [][2]string{
		{"read", `{"path":"handler.go","offset":1,"limit":40}`},
		{"edit", `{"path":"handler.go","old_string":"step(ctx, 7)","new_string":"step(ctx, 70)"}`},
		{"write", `{"path":"notes.md","content":"# Notes\n\nWrapped every error.\n"}`},
		{"bash", `{"command":"seq 1 40; echo done","description":"count"}`},
		{"grep", `{"pattern":"step","path":"."}`},
		{"todo_write", `{"todos":[{"content":"Wrap errors","status":"completed"},{"content":"Run tests","status":"in_progress"}]}`},
	}
	type logged struct {
		name          string
		args, preview jsontext.Value
		res           tool.Result
	}
	var calls []logged
	for _, s := range specs {
		env := tool.Env{Session: ts}
		t, _ := reg.Get(s[0])
		preview, fail := t.Preview(context.Background(), env, []byte(s[1]))
		if fail != nil {
			return "", fmt.Errorf("%s: %s", s[0], fail.TextOf())
		}
		res, err := reg.Run(context.Background(), env, s[0], []byte(s[1]), preview)
		if err != nil {
			return "", err
		}
		reg.Fold(ts, s[0], []byte(s[1]), res) // as the agent does: edit needs the read
		calls = append(calls, logged{s[0], jsontext.Value(s[1]), preview, res})
	}
	id := session.NewID(time.Now())
	l, err := session.Create(dir, id, ws, session.Options{})
	if err != nil {
		return "", err
	}
	for k := 0; k < n; {
		recs := []session.Record{{Type: session.TypeUser, Text: "Wrap every error in handler.go."}}
		for _, c := range calls {
			k++
			cid := fmt.Sprintf("toolu_%08d", k)
			res := c.res
			recs = append(recs,
				session.Record{Type: session.TypeToolCall, CallID: cid, Name: c.name, Args: c.args, Preview: c.preview},
				session.Record{Type: session.TypeToolResult, CallID: cid, Result: &res},
				session.Record{Type: session.TypeAssistant, Text: "That step is done; on to the next."})
		}
		recs = append(recs, session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 15230, OutputTokens: 812}})
		for _, r := range recs {
			if err := l.Append(r); err != nil {
				return "", err
			}
		}
	}
	return id, l.Close()
}
