// Package acpload writes the session logs the ACP benchmarks load and loads
// them through a real `dsh acp`, measuring latency and peak RSS.
package acpload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// Mixed writes a session log of n calls into dir: each built-in tool is run
// once for real in ws, and its call and result repeated under fresh ids.
func Mixed(ws, dir string, n int) (string, error) {
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

// Big writes a log of about size bytes into sessions: calls whose outputs are
// result bytes each, as a long session of builds and tests would log them.
func Big(sessions, ws string, size int64, result int) (string, int64, error) {
	id := session.NewID(time.Now().Add(time.Duration(result) * time.Millisecond))
	l, err := session.Create(sessions, id, ws, session.Options{})
	if err != nil {
		return "", 0, err
	}
	const line = "ok   some/package/path   0.123s\n"
	out := strings.Repeat(line, max(1, result/len(line)))
	n := 0
	written := int64(0)
	for written < size {
		cid := fmt.Sprintf("c%d", n)
		n++
		args := []byte(`{"command":"go test ./..."}`)
		res := tool.Result{Content: []card.Content{card.Text(out)}, Meta: []byte(fmt.Sprintf(`{"exitCode":0,"cwd":".","outputLength":%d}`, len(out)))}
		for _, r := range []session.Record{
			{Type: session.TypeUser, Text: "run the tests"},
			{Type: session.TypeToolCall, CallID: cid, Name: "bash", Args: args},
			{Type: session.TypeToolResult, CallID: cid, Result: &res},
			{Type: session.TypeTurnEnd, StopReason: "end_turn"},
		} {
			if err := l.Append(r); err != nil {
				return "", 0, err
			}
		}
		written += int64(len(out)) + 400
	}
	if err := l.Close(); err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		return "", 0, err
	}
	return id, fi.Size(), nil
}

// Load spawns `dsh acp`, loads the session and returns the latency of
// session/load and the process's peak RSS (VmHWM, bytes) after it.
func Load(dsh, ws, sessions, id string) (time.Duration, int64, error) {
	st, err := LoadStats(dsh, ws, sessions, id)
	return st.Latency, st.PeakRSS, err
}

// Stats are what one session/load cost dsh.
type Stats struct {
	Latency time.Duration
	PeakRSS int64 // VmHWM after it, bytes
	// CPU is dsh's user and system time during the load: on a shared machine
	// it moves less than the latency.
	CPU time.Duration
}

// LoadStats spawns `dsh acp` and loads the session. It reads the replayed
// updates as cheaply as it can, so that dsh is what is measured.
func LoadStats(dsh, ws, sessions, id string) (Stats, error) {
	var st Stats
	cmd := exec.Command(dsh, "acp", "--session-dir", sessions)
	cmd.Dir = ws
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return st, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return st, err
	}
	if err := cmd.Start(); err != nil {
		return st, err
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) error {
		_, err := io.WriteString(stdin, s+"\n")
		return err
	}
	// waitFor reads messages (the replayed updates included) until the answer to id.
	waitFor := func(reqID int) error {
		want := `"id":` + strconv.Itoa(reqID) + `,`
		long := false // inside a line longer than the buffer: an update, not an answer
		for {
			line, err := r.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				long = true
				continue
			}
			if err != nil {
				return err
			}
			if long {
				long = false
				continue
			}
			if !strings.HasPrefix(string(line[:min(len(line), 64)]), `{"jsonrpc":"2.0","method"`) &&
				strings.Contains(string(line), want) && !strings.Contains(string(line), `"method"`) {
				if strings.Contains(string(line), `"error"`) {
					return errors.New(strings.TrimSpace(string(line)))
				}
				return nil
			}
		}
	}
	if err := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`); err != nil {
		return st, err
	}
	if err := waitFor(1); err != nil {
		return st, err
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return st, err
	}
	start := time.Now()
	if err := send(`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"` + id + `","cwd":"` + ws + `","mcpServers":[]}}`); err != nil {
		return st, err
	}
	if err := waitFor(2); err != nil {
		return st, err
	}
	st.Latency = time.Since(start)
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return st, err
	}
	st.CPU = cpu1 - cpu0
	st.PeakRSS, err = PeakRSS(cmd.Process.Pid)
	return st, err
}

// cpuTime is a process's user and system time so far (/proc/PID/stat).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), ") ") // the name may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("odd /proc/%d/stat", pid)
	}
	var ticks int64
	for _, v := range f[11:13] { // utime, stime (fields 14 and 15)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// PeakRSS is a process's VmHWM in bytes.
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM")
}
