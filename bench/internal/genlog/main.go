// Command genlog writes a session log of N records for bench/replay.sh. It runs
// each tool once for real in a scratch workspace, so the records carry the meta the
// presenters really get, then repeats those calls under fresh ids: half the records
// are tool calls and results of every kind.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

type call struct {
	name, args string
	res        tool.Result
	progress   []string
}

func main() {
	n := flag.Int("n", 100_000, "records to write")
	out := flag.String("o", "", "log file to write")
	flag.Parse()
	if *out == "" {
		log.Fatal("genlog: -o FILE is required")
	}
	calls, cwd, err := realCalls()
	if err != nil {
		log.Fatalf("genlog: %v", err)
	}
	if err := write(*out, *n, calls, cwd); err != nil {
		log.Fatalf("genlog: %v", err)
	}
}

func realCalls() ([]call, string, error) {
	dir, err := os.MkdirTemp("", "dsh-genlog-")
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = os.RemoveAll(dir) }() // scratch space only
	var src strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&src, "\tif err := step(ctx, %d); err != nil { return err }\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.go"), []byte("package pkg\n\n"+src.String()), 0o644); err != nil {
		return nil, "", err
	}
	ws, err := workspace.New(dir, false)
	if err != nil {
		return nil, "", err
	}
	reg := toolset.New(toolset.Options{})
	sess := tool.NewSession("genlog", ws)
	defer func() { _ = sess.Close() }() // kills the one background job
	specs := [][2]string{
		{"read", `{"path":"handler.go","offset":1,"limit":40}`},
		{"edit", `{"path":"handler.go","old_string":"step(ctx, 7)","new_string":"step(ctx, 70)"}`},
		{"edit", `{"path":"handler.go","old_string":"return err","new_string":"return fmt.Errorf(\"step: %w\", err)","replace_all":true}`},
		{"write", `{"path":"notes.md","content":"# Notes\n\nWrapped every error.\n"}`},
		{"write", `{"path":"notes.md","content":"# Notes\n\nWrapped every error in handler.go.\n"}`},
		{"bash", `{"command":"seq 1 40; echo done","description":"count"}`},
		{"bash", `{"command":"echo failing; exit 2"}`},
		{"bash", `{"command":"sleep 0.1; echo ready","run_in_background":true}`},
		{"job_list", `{}`},
		{"todo_write", `{"todos":[{"content":"Wrap errors","status":"completed"},{"content":"Run tests","status":"in_progress","priority":"high"}]}`},
	}
	var calls []call
	for _, s := range specs {
		c := call{name: s[0], args: s[1]}
		env := tool.Env{Session: sess, Progress: func(chunk string) { c.progress = append(c.progress, chunk) }}
		res, err := reg.Run(context.Background(), env, s[0], []byte(s[1]), nil)
		if err != nil {
			return nil, "", err
		}
		c.res = res
		calls = append(calls, c)
	}
	return calls, dir, nil
}

func write(path string, n int, calls []call, cwd string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	t0 := time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)
	i := 0
	put := func(r session.Record) error {
		r.Time = t0.Add(time.Duration(i) * time.Millisecond)
		i++
		b, err := json.Marshal(r, json.Deterministic(true))
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	if err := put(session.Record{Type: session.TypeHeader, Version: session.FormatVersion, SessionID: "bench", Cwd: cwd}); err != nil {
		return err
	}
	for k := 0; i < n; {
		if err := put(session.Record{Type: session.TypeUser, Text: "Wrap every error in handler.go and run the tests."}); err != nil {
			return err
		}
		for _, c := range calls {
			k++
			id := fmt.Sprintf("toolu_%08d", k)
			res := c.res
			recs := []session.Record{{Type: session.TypeToolCall, CallID: id, Name: c.name, Args: jsontext.Value(c.args)}}
			for _, p := range c.progress {
				recs = append(recs, session.Record{Type: session.TypeProgress, CallID: id, Chunk: p})
			}
			recs = append(recs, session.Record{Type: session.TypeToolResult, CallID: id, Result: &res},
				session.Record{Type: session.TypeAssistant, Text: "That step is done; on to the next."})
			for _, r := range recs {
				if err := put(r); err != nil {
					return err
				}
			}
		}
		if err := put(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 15230, OutputTokens: 812}}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
