package session

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// writeBenchLog writes a log of n records, half of them tool calls and results of
// every kind (read, edit, write, bash, background job, todo), the rest the user,
// assistant, thinking, progress, plan and turn-end records around them.
func writeBenchLog(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	i := 0
	put := func(r Record) {
		r.Time = t0.Add(time.Duration(i) * time.Millisecond)
		line, _, err := encode(r)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(line)
		i++
	}
	raw := func(v any) jsontext.Value {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	var src strings.Builder
	var lines []card.ReadLine
	for k := 1; k <= 40; k++ {
		text := fmt.Sprintf("\tif err := doSomething(ctx, %d, \"value\"); err != nil { return err }", k)
		fmt.Fprintf(&src, "%d: %s\n", k, text)
		lines = append(lines, card.ReadLine{Number: k, Text: text})
	}
	out := strings.Repeat("ok  \tgithub.com/example/project/pkg\t0.012s\n", 20)
	old, repl := "return err", "return fmt.Errorf(\"do: %w\", err)"

	put(Record{Type: TypeHeader, Version: FormatVersion, SessionID: "bench", Cwd: "/work/project"})
	for i < n {
		put(Record{Type: TypeUser, Text: "Please fix the failing test in pkg/handler.go and run the suite."})
		put(Record{Type: TypeThinking, Text: "The test fails because the error is not wrapped; read the file first.", Signature: "EqQBCkYIBxgCKkDk"})
		for kind := 0; kind < 6 && i < n; kind++ {
			id := fmt.Sprintf("toolu_%08d", i)
			var args jsontext.Value
			var res tool.Result
			switch kind {
			case 0:
				args = raw(map[string]any{"path": "pkg/handler.go", "offset": 1, "limit": 40})
				res = tool.Result{Content: []card.Content{card.Text("<path>pkg/handler.go</path>\n<type>file</type>\n<content>\n" + src.String() + "</content>")},
					Meta: raw(map[string]any{"path": "pkg/handler.go", "offset": 1, "lines": lines, "totalLines": 120, "lang": "go"})}
			case 1:
				args = raw(map[string]any{"path": "pkg/handler.go", "old_string": old, "new_string": repl})
				res = tool.Result{Content: []card.Content{card.Text("Edited pkg/handler.go (1 replacement).")},
					Meta: raw([]card.FileDiff{{Path: "pkg/handler.go", OldText: &old, NewText: repl, OldStart: 12, NewStart: 12}})}
			case 2:
				args = raw(map[string]any{"path": "pkg/new.go", "content": src.String()})
				res = tool.Result{Content: []card.Content{card.Text("Wrote pkg/new.go (40 lines).")},
					Meta: raw([]card.FileDiff{{Path: "pkg/new.go", NewText: src.String(), NewStart: 1}})}
			case 3:
				args = raw(map[string]any{"command": "go test ./...", "description": "run the tests"})
				put(Record{Type: TypeToolCall, CallID: id, Name: "bash", Args: args})
				put(Record{Type: TypeProgress, CallID: id, Chunk: out[:200]})
				res = tool.Result{Content: []card.Content{card.Text(out)}, Meta: raw(map[string]any{"exitCode": 0})}
				put(Record{Type: TypeToolResult, CallID: id, Result: &res})
				continue
			case 4:
				args = raw(map[string]any{"command": "npm run dev", "run_in_background": true})
				res = tool.Result{Content: []card.Content{card.Text("Started background job job_3 (pid 4242).")}}
			case 5:
				plan := []tool.PlanEntry{{Content: "Wrap the error", Status: "completed"}, {Content: "Run the tests", Status: "in_progress", Priority: "high"}}
				args = raw(map[string]any{"todos": plan})
				res = tool.Result{Content: []card.Content{card.Text("Todo list updated.")}, Meta: raw(plan)}
				put(Record{Type: TypePlan, Plan: plan})
			}
			name := [...]string{"read", "edit", "write", "bash", "bash", "todo_write"}[kind]
			put(Record{Type: TypeToolCall, CallID: id, Name: name, Args: args})
			put(Record{Type: TypeToolResult, CallID: id, Result: &res})
			put(Record{Type: TypeAssistant, Text: "Done with that step; moving on."})
		}
		put(Record{Type: TypeTurnEnd, StopReason: "end_turn", Usage: &Usage{InputTokens: 15230, OutputTokens: 812}})
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReadFile reads a 100 000-record log; bench/replay.sh compares the
// whole replay with jq on the same kind of log.
func BenchmarkReadFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	writeBenchLog(b, path, 100_000)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		recs, err := ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) < 100_000 {
			b.Fatalf("read %d records", len(recs))
		}
	}
}
