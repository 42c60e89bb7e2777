package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// The test binary is its own model runner, with fake providers: asked with
// fakeRunner set, it serves instead of testing.
const fakeRunner = "DSH_REMOTE_TEST_RUNNER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeClient) == "1" {
		_ = os.Unsetenv(fakeClient) // the runner it starts is one
		client()
	}
	if os.Getenv(fakeRunner) == "1" {
		if err := Serve(os.Stdin, os.Stdout, fakes{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	_ = os.Setenv(fakeRunner, "1")
	_ = os.Setenv(RunnerEnv, os.Args[0])
	os.Exit(m.Run())
}

// fakeClient has the test binary be a dsh that starts the runner, says its
// pid and waits to be killed.
const fakeClient = "DSH_REMOTE_TEST_CLIENT"

func client() {
	p, err := New(context.Background(), Spec{Backend: "stuck"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	started := make(chan struct{})
	go func() {
		_, _ = p.Stream(context.Background(), request("x"), func(provider.Delta) { close(started) })
	}()
	<-started
	current.Lock()
	fmt.Println(current.r.cmd.Process.Pid)
	current.Unlock()
	select {}
}

// fakes are the providers of the fake runner, by the spec's backend.
type fakes struct{}

var (
	cancelled     = make(chan struct{}) // closed when a "hang" stream is cancelled
	cancelledOnce sync.Once
)

func (fakes) Build(spec Spec) (provider.Provider, error) {
	switch spec.Backend {
	case "auth":
		return nil, fmt.Errorf("no key: set FAKE_KEY: %w", provider.ErrAuth)
	case "was-cancelled": // answers once a hang stream was cancelled
		select {
		case <-cancelled:
			return fake{name: "cancelled"}, nil
		case <-time.After(10 * time.Second):
			return fake{name: "not cancelled"}, nil
		}
	}
	return fake{name: spec.Backend, env: spec.Env}, nil
}

func (fakes) List(_ context.Context, spec Spec) ([]models.Info, error) {
	return []models.Info{{ID: "m1", Provider: spec.Backend, ContextWindow: 1000}}, nil
}

func (fakes) Served(_ context.Context, spec Spec) (string, error) {
	return "served-by-" + spec.Env["OPENAI_BASE_URL"], nil
}

type fake struct {
	name string
	env  map[string]string
}

func (f fake) Name() string { return f.name }

func (f fake) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, error) {
	switch f.name {
	case "hang":
		onDelta(provider.Delta{Type: provider.DeltaText, Text: "waiting"})
		<-ctx.Done()
		cancelledOnce.Do(func() { close(cancelled) })
		return nil, ctx.Err()
	case "stuck": // a call that does not heed its context
		onDelta(provider.Delta{Type: provider.DeltaText, Text: "stuck"})
		select {}
	case "die":
		onDelta(provider.Delta{Type: provider.DeltaText, Text: "bye"})
		os.Exit(3)
	case "busy":
		return nil, fmt.Errorf("overloaded: %w", provider.ErrUnavailable)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if string(p.Args) == "null" {
				return nil, errors.New("arguments arrived as null")
			}
		}
	}
	for _, d := range req.Tools {
		if string(d.Schema) == "null" {
			return nil, errors.New("a schema arrived as null")
		}
	}
	if f.name == "garbled" { // arguments JSON cannot carry
		return &provider.Response{Message: provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
			{Type: provider.PartToolUse, ID: "c1", Name: "read", Args: jsontext.Value(`{"path":`)}}}}, nil
	}
	// echo: the request as it arrived, as the answer's text and its one
	// tool call's arguments; each rune of the last text a delta.
	b, err := json.Marshal(req, wire)
	if err != nil {
		return nil, err
	}
	last := ""
	if n := len(req.Messages); n > 0 && len(req.Messages[n-1].Parts) > 0 {
		last = req.Messages[n-1].Parts[0].Text
	}
	for _, r := range last {
		onDelta(provider.Delta{Type: provider.DeltaText, Text: string(r)})
	}
	return &provider.Response{
		Message: provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
			{Type: provider.PartText, Text: string(b)},
			{Type: provider.PartToolUse, ID: "c1", Name: "read", Args: jsontext.Value(`{"path":"` + f.env["K"] + `"}`)},
		}},
		StopReason: provider.StopToolUse, InputTokens: 12, OutputTokens: 34,
	}, nil
}

// request has what JSON could change on the way: absent arguments, nil and
// empty lists, an image, text that is not UTF-8.
func request(text string) provider.Request {
	return provider.Request{
		Model: "m", System: "sys", MaxTokens: 100, Thinking: "high", WebSearch: true,
		Tools: []provider.ToolDef{{Name: "read", Description: "reads", Schema: jsontext.Value(`{"type":"object"}`)}, {Name: "bare"}},
		Messages: []provider.Message{
			{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: "see"}, {Type: provider.PartImage, Content: []card.Content{card.Image("image/png", "iVBORw0K")}}}},
			{Role: provider.RoleAssistant, Parts: []provider.Part{{Type: provider.PartToolUse, ID: "a", Name: "noargs"}, {Type: provider.PartToolUse, ID: "b", Name: "read", Args: jsontext.Value(`{"path":"x"}`)},
				{Type: provider.PartToolUse, ID: "c", Name: "read", Args: jsontext.Value(`{"path":"x","path":"y"}`)}}}, // a model may repeat a key
			{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartToolResult, ID: "a", IsError: true, Content: []card.Content{}}}},
			{Role: provider.RoleUser, Parts: []provider.Part{{Type: provider.PartText, Text: text}}},
		},
	}
}

// TestStreamThroughTheRunner: the runner's provider is handed the request dsh
// built, unchanged; its deltas arrive in order in the caller's goroutine, and
// its message as it wrote it.
func TestStreamThroughTheRunner(t *testing.T) {
	p, err := New(t.Context(), Spec{Backend: "echo", Env: map[string]string{"K": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "echo" {
		t.Errorf("Name = %q", p.Name())
	}
	req := request("héllo ✓")
	var deltas strings.Builder
	resp, err := p.Stream(t.Context(), req, func(d provider.Delta) { deltas.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if deltas.String() != "héllo ✓" {
		t.Errorf("deltas %q", deltas.String())
	}
	var got provider.Request
	if err := json.Unmarshal([]byte(resp.Message.Parts[0].Text), &got, wire); err != nil {
		t.Fatal(err)
	}
	restoreNil(&got) // the echo's own trip back
	if !reflect.DeepEqual(got, req) {
		t.Errorf("the runner was handed\n%+v\nwant\n%+v", got, req)
	}
	want := provider.Part{Type: provider.PartToolUse, ID: "c1", Name: "read", Args: jsontext.Value(`{"path":"v"}`)}
	if !reflect.DeepEqual(resp.Message.Parts[1], want) || resp.StopReason != provider.StopToolUse || resp.InputTokens != 12 || resp.OutputTokens != 34 {
		t.Errorf("response %+v", resp)
	}

	// Text that is not UTF-8 is sent as an SDK sends it, not refused.
	if _, err := p.Stream(t.Context(), request("bad \xff byte"), nil); err != nil {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

// TestErrorsKeepTheirKind: what dsh acts on in a provider's error survives
// the pipe: a missing key is still ErrAuth, an exhausted retry still
// ErrUnavailable, each with its message.
func TestErrorsKeepTheirKind(t *testing.T) {
	_, err := New(t.Context(), Spec{Backend: "auth"})
	if !errors.Is(err, provider.ErrAuth) || err.Error() != "no key: set FAKE_KEY: authentication failed" {
		t.Errorf("build: %v", err)
	}
	p, err := New(t.Context(), Spec{Backend: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(t.Context(), request("x"), nil)
	if !errors.Is(err, provider.ErrUnavailable) || errors.Is(err, provider.ErrAuth) || !strings.HasPrefix(err.Error(), "overloaded: ") {
		t.Errorf("stream: %v", err)
	}
}

// TestCancelReachesTheRunner: cancelling a stream returns at once and
// cancels the provider's call in the runner.
func TestCancelReachesTheRunner(t *testing.T) {
	p, err := New(t.Context(), Spec{Backend: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	_, err = p.Stream(ctx, request("x"), func(provider.Delta) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, want it cancelled", err)
	}
	q, err := New(t.Context(), Spec{Backend: "was-cancelled"})
	if err != nil || q.Name() != "cancelled" {
		t.Errorf("the runner's call was not cancelled: %v, %v", q, err)
	}
}

// TestConcurrentStreams: the sessions of one process share the runner, each
// stream getting its own deltas and answer.
func TestConcurrentStreams(t *testing.T) {
	p, err := New(t.Context(), Spec{Backend: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			text := strings.Repeat(fmt.Sprint(i), 200)
			var got strings.Builder
			resp, err := p.Stream(t.Context(), request(text), func(d provider.Delta) { got.WriteString(d.Text) })
			if err != nil || got.String() != text || !strings.Contains(resp.Message.Parts[0].Text, text) {
				t.Errorf("stream %d: %v; deltas %q", i, err, got.String())
			}
		})
	}
	wg.Wait()
}

// TestRunnerDiesAndIsStartedAgain: a runner that dies fails the calls it
// had, saying so, and the next call starts a new one.
func TestRunnerDiesAndIsStartedAgain(t *testing.T) {
	p, err := New(t.Context(), Spec{Backend: "die"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(t.Context(), request("x"), nil)
	if err == nil || !strings.Contains(err.Error(), "the model runner stopped") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stream = %v, want the runner's end told", err)
	}
	q, err := New(t.Context(), Spec{Backend: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Stream(t.Context(), request("again"), nil); err != nil {
		t.Errorf("after a restart: %v", err)
	}
	ms, err := List(t.Context(), Spec{Backend: "echo"})
	if err != nil || len(ms) != 1 || ms[0].ID != "m1" || ms[0].Provider != "echo" || ms[0].ContextWindow != 1000 {
		t.Errorf("List = %+v, %v", ms, err)
	}
	m, err := Served(t.Context(), Spec{Backend: "openai", Env: map[string]string{"OPENAI_BASE_URL": "http://x"}})
	if err != nil || m != "served-by-http://x" {
		t.Errorf("Served = %q, %v", m, err)
	}
}

// TestOneBadCallFailsAlone: a request JSON cannot carry fails that call,
// and an answer it cannot carry ends its call with an error; the runner
// serves the next call, the same process.
func TestOneBadCallFailsAlone(t *testing.T) {
	p, err := New(t.Context(), Spec{Backend: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	current.Lock()
	pid := current.r.cmd.Process.Pid
	current.Unlock()
	bad := request("x")
	bad.Messages[1].Parts[1].Args = jsontext.Value(`{"path":`)
	if _, err := p.Stream(t.Context(), bad, nil); err == nil || !strings.Contains(err.Error(), "cannot be sent") {
		t.Errorf("an unsendable request: %v", err)
	}
	g, err := New(t.Context(), Spec{Backend: "garbled"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Stream(t.Context(), request("x"), nil); err == nil || !strings.Contains(err.Error(), "could not be passed on") {
		t.Errorf("an unpassable answer: %v", err)
	}
	if _, err := p.Stream(t.Context(), request("after"), nil); err != nil {
		t.Errorf("the next call: %v", err)
	}
	current.Lock()
	same := current.r.cmd.Process.Pid == pid
	current.Unlock()
	if !same {
		t.Error("the runner was started again")
	}
}

// TestRunnerDiesWithDsh: a dsh killed with SIGKILL leaves no runner behind,
// even one whose call does not end when its input does.
func TestRunnerDiesWithDsh(t *testing.T) {
	dsh := exec.Command(os.Args[0])
	dsh.Env = append(os.Environ(), fakeClient+"=1")
	out, err := dsh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := dsh.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = dsh.Process.Kill()
		t.Fatalf("the client said %q (%v)", line, err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	_ = dsh.Process.Signal(syscall.SIGKILL)
	_ = dsh.Wait()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10_000); err != nil || n != 1 {
		t.Fatalf("the runner (pid %d) outlived dsh by 10 s (%d, %v)", pid, n, err)
	}
}

// TestRunnerEndsWithItsInput: when dsh closes the runner's input, the calls
// still running are cancelled and the runner ends.
func TestRunnerEndsWithItsInput(t *testing.T) {
	r, w := io.Pipe()
	done := make(chan error)
	go func() { done <- Serve(r, io.Discard, fakes{}) }()
	line, err := encodeLine(call{ID: 1, Op: opStream, Spec: &Spec{Backend: "hang"}, Req: &provider.Request{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(line); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the runner still runs 10 s after its input ended")
	}
}

// TestRunnerThatIsNotOurs: a dsh-model of another build, or none, is told
// in words that say what to do.
func TestRunnerThatIsNotOurs(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("#!/bin/sh\necho '{\"id\":0,\"name\":\"dsh-model/0\"}'\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mute := filepath.Join(dir, "mute")
	if err := os.WriteFile(mute, []byte("#!/bin/sh\nwhile read x; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wait := helloWait
	helloWait = 100 * time.Millisecond
	t.Cleanup(func() { helloWait = wait })
	for _, tc := range []struct{ runner, path, want string }{
		{other, "", "install dsh and dsh-model from the same build"},
		{mute, "", "it did not answer within 100ms"},
		{"", dir, "dsh-model, which talks to the model providers, is not installed beside dsh"},
		{"dsh-model", dir, "must be an absolute path"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Setenv(RunnerEnv, tc.runner)
			t.Setenv("PATH", tc.path)
			forget(t)
			_, err := New(t.Context(), Spec{Backend: "echo"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
}

// forget has the next call start a runner, and the test's end too.
func forget(t *testing.T) {
	current.Lock()
	current.r = nil
	current.Unlock()
	t.Cleanup(func() {
		current.Lock()
		current.r = nil
		current.Unlock()
	})
}

// FuzzServe: whatever lines reach the runner, it answers or ignores them and
// ends when its input does.
func FuzzServe(f *testing.F) {
	f.Add([]byte(`{"id":1,"op":"build","spec":{"backend":"echo"}}` + "\n"))
	f.Add([]byte(`{"id":2,"op":"stream","spec":{"backend":"echo"},"req":{"Messages":[{"Parts":[{"Text":"x"}]}]}}` + "\n"))
	f.Add([]byte(`{"id":3,"op":"list","spec":{"backend":"x"}}` + "\n" + `{"id":3,"op":"cancel"}` + "\n"))
	f.Add([]byte(`{"id":4,"op":"nope"}` + "\n" + `{"id":5,"op":"stream","spec":{"backend":"echo"}}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if bytes.Contains(in, []byte("hang")) || bytes.Contains(in, []byte("stuck")) || bytes.Contains(in, []byte("die")) || bytes.Contains(in, []byte("was-cancelled")) {
			return // the fakes that wait, or exit
		}
		var out bytes.Buffer
		_ = Serve(bytes.NewReader(in), &out, fakes{})
		if !bytes.HasPrefix(out.Bytes(), []byte(`{"id":0,"name":"dsh-model/1"}`)) {
			t.Errorf("no hello first: %q", out.String())
		}
	})
}
