package acp_test

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
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/acp"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// bigResult is the size of each result of a log of large results: a fetched
// page or a job's whole buffer, far beyond what the model is sent.
const bigResult = 4 << 20

// bigLog writes a session log in dir of n calls whose results are bigResult
// bytes of output each, and returns the session id and the output.
func bigLog(tb testing.TB, dir, ws string, n int) (string, string) {
	tb.Helper()
	id := session.NewID(time.Now())
	l, err := session.Create(dir, id, ws, session.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	const line = "ok   some/package/path   0.123s\n"
	out := strings.Repeat(line, bigResult/len(line))
	for i := range n {
		cid := fmt.Sprintf("c%d", i)
		res := tool.Result{Content: []card.Content{card.Text(out)},
			Meta: fmt.Appendf(nil, `{"exitCode":0,"cwd":".","outputLength":%d}`, len(out))}
		for _, r := range []session.Record{
			{Type: session.TypeUser, Text: "run the tests"},
			{Type: session.TypeToolCall, CallID: cid, Name: "bash", Args: []byte(`{"command":"go test ./..."}`)},
			{Type: session.TypeToolResult, CallID: cid, Result: &res},
			{Type: session.TypeTurnEnd, StopReason: "end_turn"},
		} {
			if err := l.Append(r); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return id, out
}

var plainBin = sync.OnceValues(func() (string, error) {
	if len(raceFlags) == 0 {
		return dshBin, nil
	}
	bin := filepath.Join(filepath.Dir(dshBin), "dsh-norace")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/dsh-dev/dsh/cmd/dsh").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building dsh without -race: %w\n%s", err, out)
	}
	return bin, nil
})

// TestLoadLargeResultsBoundedMemory: session/load of a ~100 MB log of 4 MiB
// tool results peaks under 100 MiB of RSS (the process's VmHWM, of a build
// without the race detector, whose shadow memory would be measured too), and
// still sends each result's whole output, as live does.
func TestLoadLargeResultsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and loads a 100 MB log")
	}
	bin, err := plainBin()
	if err != nil {
		t.Fatal(err)
	}
	dir, ws := t.TempDir(), t.TempDir()
	id, out := bigLog(t, dir, ws, 24)
	cmd := exec.Command(bin, "acp", "--session-dir", dir)
	cmd.Dir = ws
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(stdout, 64<<10)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := answer(r, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`+"\n", id, ws); err != nil {
		t.Fatal(err)
	}
	long, err := answer(r, 2)
	if err != nil {
		t.Fatal(err)
	}
	peak, err := vmHWM(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %.1f MiB", float64(peak)/(1<<20))
	if long != 24 {
		t.Errorf("%d updates carried a whole output, want 24", long)
	}
	if peak > 100<<20 {
		t.Errorf("peak RSS %.1f MiB loading a %d MB log, want <= 100 MiB", float64(peak)/(1<<20), 24*len(out)>>20)
	}
}

// answer reads dsh's messages up to the response to id and counts the lines
// longer than a large result (each a result's output sent whole).
func answer(r *bufio.Reader, id int) (long int, err error) {
	want := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"result"`)
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return long, err
		}
		if n > bigResult {
			long++
		}
		if n == len(chunk) && len(chunk) >= len(want) && string(chunk[:len(want)]) == string(want) {
			return long, nil
		}
		if n == len(chunk) && strings.Contains(string(chunk), `"error"`) && strings.Contains(string(chunk), `"id":`+strconv.Itoa(id)) {
			return long, errors.New(string(chunk))
		}
		n = 0
	}
}

func vmHWM(pid int) (int64, error) {
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

// BenchmarkLoadLargeResults is session/load, through Serve and an OS pipe, of
// a log of 24 results of 4 MiB (for profiles of what a load holds).
func BenchmarkLoadLargeResults(b *testing.B) {
	dir, ws := b.TempDir(), b.TempDir()
	id, _ := bigLog(b, dir, ws, 24)
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- acp.Serve(context.Background(), inR, outW, acp.Options{SessionDir: dir}) }()
	r := bufio.NewReaderSize(outR, 64<<10)
	n := 0
	call := func(method, params string) {
		n++
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", n, method, params); err != nil {
			b.Fatal(err)
		}
		if _, err := answer(r, n); err != nil {
			b.Fatal(err)
		}
	}
	call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	for b.Loop() {
		call("session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, ws))
	}
	_ = inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	_ = outW.Close()
}
