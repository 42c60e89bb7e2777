package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/acp/rpcfix"
	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// encodingPeer encodes every update as dsh puts it on the wire.
type encodingPeer struct{ n int }

func (p *encodingPeer) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	p.n++
	b, err := rpcfix.EncodeNotification(n)
	_, _ = io.Discard.Write(b)
	return err
}

func (p *encodingPeer) Replayed(n sdk.SessionNotification) error {
	return p.SessionUpdate(context.Background(), n)
}

func (p *encodingPeer) Flush() error { return nil }

func (p *encodingPeer) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, nil
}

func (p *encodingPeer) Elicit(context.Context, rpcfix.Elicitation) (rpcfix.Elicited, error) {
	return rpcfix.Elicited{}, nil
}

// BenchmarkLoadSession is session/load of a session of 1 000 read calls, the
// protocol's encoding included, without the pipe.
func BenchmarkLoadSession(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("a line of text\n", 10)), 0o644); err != nil {
		b.Fatal(err)
	}
	var turns []script.Turn
	for p := range 25 {
		var tc []script.ToolCall
		for i := range 40 {
			tc = append(tc, script.ToolCall{ID: fmt.Sprintf("p%d-%d", p, i), Name: "read", Args: []byte(`{"path":"a.txt"}`)})
		}
		turns = append(turns, script.Turn{ToolCalls: tc}, script.Turn{Text: "ok"})
	}
	js, _ := json.Marshal(map[string]any{"turns": turns})
	sp, err := script.Parse(js)
	if err != nil {
		b.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: root, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return sp, nil }})
	if err != nil {
		b.Fatal(err)
	}
	for range 25 {
		if _, err := s.Prompt(b.Context(), "go"); err != nil {
			b.Fatal(err)
		}
	}
	id := s.ID()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	a := New(Options{SessionDir: dir})
	peer := &encodingPeer{}
	a.setPeer(peer)
	for b.Loop() {
		if _, err := a.LoadSession(b.Context(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peer.n)/float64(b.N), "updates/op")
	_ = a.Close()
}

// BenchmarkNewSession is session/new as the agent answers it (settings,
// host, commands, the first updates encoded), without the pipe.
func BenchmarkNewSession(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	a := New(Options{SessionDir: dir})
	a.setPeer(&encodingPeer{})
	for b.Loop() {
		if _, err := a.NewSession(b.Context(), sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoadMixed is session/load, through Serve and an OS pipe, of a log of
// 10 000 calls of every built-in tool (their results really computed once),
// the way an editor reopens a long session.
func BenchmarkLoadMixed(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	id := mixedLog(b, root, dir, 10_000)
	benchLoad(b, root, dir, id)
}

// benchLoad loads session id through Serve and an OS pipe, reading the
// updates as a client that does nothing with them, and reports the CPU time
// per load.
func benchLoad(b *testing.B, root, dir, id string) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW, Options{SessionDir: dir}) }()
	replies := make(chan int, 1)
	go func() { // the client: reads everything, hands over each response's id
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if bytes.HasPrefix(sc.Bytes(), []byte(`{"jsonrpc":"2.0","method"`)) {
				continue // an update: decoding it would measure the client
			}
			var m struct {
				ID     *int   `json:"id"`
				Method string `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil && m.Method == "" {
				replies <- *m.ID
			}
		}
		close(replies)
	}()
	n := 0
	call := func(method, params string) {
		n++
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", n, method, params); err != nil {
			b.Fatal(err)
		}
		if got := <-replies; got != n {
			b.Fatalf("%s: answer %d, want %d", method, got, n)
		}
	}
	call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	cpu0 := cpuTime(b)
	for b.Loop() {
		call("session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, root))
	}
	// CPU time says more than wall time on a shared machine.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	_ = inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	_ = outW.Close()
}

// mixedLog writes a session log of n calls into dir: each built-in tool is run
// once for real in root, and its call and result repeated under fresh ids.
func mixedLog(tb testing.TB, root, dir string, n int) string {
	tb.Helper()
	var src strings.Builder
	for i := range 120 {
		fmt.Fprintf(&src, "\tif err := step(ctx, %d); err != nil { return err }\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "handler.go"), []byte("package pkg\n\n"+src.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	ws, err := workspace.New(root, false)
	if err != nil {
		tb.Fatal(err)
	}
	reg := toolset.New(toolset.Options{})
	ts := tool.NewSession("bench", ws)
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
		name    string
		args    jsontext.Value
		preview jsontext.Value
		res     tool.Result
	}
	var calls []logged
	for _, s := range specs {
		env := tool.Env{Session: ts}
		t, _ := reg.Get(s[0])
		preview, fail := t.Preview(context.Background(), env, []byte(s[1]))
		if fail != nil {
			tb.Fatalf("%s: %s", s[0], fail.Content)
		}
		res, err := reg.Run(context.Background(), env, s[0], []byte(s[1]), preview)
		if err != nil {
			tb.Fatal(err)
		}
		reg.Fold(ts, s[0], []byte(s[1]), res) // as the agent does: edit needs the read
		calls = append(calls, logged{s[0], jsontext.Value(s[1]), preview, res})
	}
	id := session.NewID(time.Now())
	l, err := session.Create(dir, id, root, session.Options{})
	if err != nil {
		tb.Fatal(err)
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
				tb.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return id
}

// cpuTime is the CPU time the process has used so far (user and system).
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadVsDecode is session/load of the 10 200-call mixed log against
// a bare decode of the same log (issue 39: load <= 1.3x decode), the load
// through Serve and a pipe. Each reports its CPU time too, which a shared
// machine disturbs less than the wall time (the client's reading is in it).
func BenchmarkLoadVsDecode(b *testing.B) {
	root, dir := b.TempDir(), b.TempDir()
	id := mixedLog(b, root, dir, 10_200)
	b.Run("decode", func(b *testing.B) {
		cpu0 := cpuTime(b)
		for b.Loop() {
			if err := session.Scan(filepath.Join(dir, id+".jsonl"), func(session.Record) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime(b)-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	})
	b.Run("load", func(b *testing.B) { benchLoad(b, root, dir, id) })
}
