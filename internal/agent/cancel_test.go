package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/bash"
)

func TestCancelMidCommandKillsItAndLogsUnfinishedCalls(t *testing.T) {
	e := newEnv(t)
	// A sleep with a unique duration, so the test can look for it among all processes.
	marker := fmt.Sprintf("30.%06d", os.Getpid()%1_000_000)
	cmd := "echo started; sleep " + marker
	p := &probe{}
	reg := tool.NewRegistry(append(bash.Tools(), p.tools()...)...)
	fp := scripted(t, `{"turns": [
		{"text": "Running it.", "tool_calls": [
			{"id": "c1", "name": "bash", "args": {"command": `+quote(cmd)+`}},
			{"id": "c2", "name": "look", "args": {"id": "never"}}]},
		{"text": "Cancelled; what next?"}]}`)
	a := e.agent(fp, reg, ModeBypass, nil)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel once the command is running: its first output reaches the log.
	watch, stopWatch := context.WithCancel(t.Context())
	defer stopWatch()
	e.log.watch(func(r session.Record) {
		if watch.Err() == nil && r.Type == session.TypeProgress && r.CallID == "c1" && strings.Contains(r.Chunk, "started") {
			cancel()
		}
	})

	stop, err := a.Prompt(ctx, "run the slow thing")
	if err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %v, %v; want cancelled, nil", stop, err)
	}
	if pids := processesWithArg(t, marker); len(pids) > 0 {
		t.Errorf("sleep %s is still running: pids %v", marker, pids)
	}
	recs, err := session.ReadFile(e.log.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user run the slow thing",
		"assistant Running it.",
		`call c1 bash {"command":"` + cmd + `"}`,
		"result c1 error: started", // what it printed before the cancel is kept
		`call c2 look {"id":"never"}`,
		"result c2 error: Cancelled by the user.",
		"end cancelled",
	}
	if got := summary(recs); !slices.Equal(got, want) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out := resultOf(t, recs, "c1").TextOf(); !strings.Contains(out, "started\n") || !strings.Contains(out, "Cancelled") {
		t.Errorf("the cancelled command's result = %q, want its output and the cancel", out)
	}

	// The conversation goes on, and its next request is one the APIs accept.
	if stop, err := a.Prompt(t.Context(), "never mind"); err != nil || stop != StopEndTurn {
		t.Fatalf("next Prompt = %v, %v", stop, err)
	}
	reqs := fp.requests()
	if err := checkConversation(reqs[len(reqs)-1].Messages); err != nil {
		t.Error(err)
	}
}

// processesWithArg lists the live processes with arg among their arguments.
func processesWithArg(t *testing.T, arg string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(dirs) == 0 {
		t.Skipf("no /proc to inspect: %v", err)
	}
	var pids []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				pids = append(pids, filepath.Base(filepath.Dir(f)))
			}
		}
	}
	return pids
}

func TestCancelDuringTheModelStream(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	fp := scripted(t, `{"turns": [{"text": "Let me think about", "wait_for_cancel": true}, {"text": "ok"}]}`)
	a := New(Config{Provider: fp, Registry: tool.NewRegistry((&probe{}).tools()...), Log: e.log, Tools: e.tools,
		OnDelta: func(provider.Delta) { cancel() }}) // the user cancels while the model writes
	stop, err := a.Prompt(ctx, "first")
	if err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	// Nothing half-written is logged or kept: the model's partial text was only live.
	if got, want := summary(e.records(t)), []string{"user first", "end cancelled"}; !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
	if _, err := a.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	msgs := fp.requests()[1].Messages
	if err := checkConversation(msgs); err != nil {
		t.Error(err)
	}
	if got := describe(msgs); !slices.Equal(got, []string{"user: text first | text second"}) {
		t.Errorf("second request = %q", got)
	}
}

func TestCancelledReadOnlyGroupKeepsFinishedResults(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	finished := make(chan struct{})
	p := &probe{run: func(ctx context.Context, _, id string) tool.Result {
		if id == "fast" {
			close(finished)
			return tool.Text("fast done")
		}
		<-finished // fast has returned; now the user cancels
		cancel()
		<-ctx.Done()
		return tool.Text("slow was interrupted")
	}}
	fp := &fakeProvider{turns: []turnFunc{reply(use("1", "look", `{"id":"fast"}`), use("2", "look", `{"id":"slow"}`), use("3", "change", `{"id":"x"}`))}}
	a := e.agent(fp, tool.NewRegistry(p.tools()...), ModeBypass, nil)
	if stop, err := a.Prompt(ctx, "go"); err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %v, %v", stop, err)
	}
	want := []string{"result 1 ok: fast done", "result 2 error: slow was interrupted", `call 3 change {"id":"x"}`, "result 3 error: Cancelled by the user.", "end cancelled"}
	got := summary(e.records(t))
	// The fast call may return just as the cancel lands; either way what it
	// returned is kept.
	if len(got) >= 5 && got[len(got)-5] == "result 1 error: fast done" {
		got[len(got)-5] = "result 1 ok: fast done"
	}
	if !slices.Equal(got[len(got)-5:], want) {
		t.Errorf("log = %q", got)
	}
}

// describe renders messages compactly: one string per message.
func describe(ms []provider.Message) []string {
	var out []string
	for _, m := range ms {
		var parts []string
		for _, p := range m.Parts {
			switch p.Type {
			case provider.PartText:
				parts = append(parts, "text "+p.Text)
			case provider.PartThinking:
				parts = append(parts, fmt.Sprintf("thinking %s [%s]", p.Text, p.Signature))
			case provider.PartToolUse:
				parts = append(parts, fmt.Sprintf("use %s %s %s", p.ID, p.Name, p.Args))
			case provider.PartImage:
				parts = append(parts, fmt.Sprintf("image %d", len(p.Content)))
			case provider.PartWebSearch:
				parts = append(parts, fmt.Sprintf("search %s %s [%s]", p.ID, p.Text, p.Signature))
			case provider.PartToolResult:
				var b strings.Builder
				for _, c := range p.Content {
					b.WriteString(c.Text)
				}
				status := "ok"
				if p.IsError {
					status = "error"
				}
				parts = append(parts, fmt.Sprintf("result %s %s: %s", p.ID, status, b.String()))
			}
		}
		out = append(out, fmt.Sprintf("%s: %s", m.Role, strings.Join(parts, " | ")))
	}
	return out
}
