package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/telemetry/otlptest"
)

// otelWorld is a home and a workspace for a scripted turn that reads a file,
// and the environment to run dsh in: the test's, its OTEL_* variables left
// out, extra added.
func otelWorld(t *testing.T, extra ...string) (work, script string, env []string) {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("SECRET-NOTES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(home, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [
		{"tool_calls": [{"id": "r1", "name": "read", "args": {"path": "notes.txt"}}], "input_tokens": 900, "output_tokens": 12},
		{"text": "SECRET-REPLY", "input_tokens": 950, "output_tokens": 7}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "DSH_OTEL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	return work, script, append(env, extra...)
}

// otelRun runs `dsh run` in an otelWorld and returns what dsh printed.
func otelRun(t *testing.T, extra ...string) string {
	t.Helper()
	work, script, env := otelWorld(t, extra...)
	cmd := exec.Command(dsh(t), "run", "--script", script, "read SECRET-PROMPT")
	cmd.Dir, cmd.Env = work, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dsh run: %v\n%s", err, out)
	}
	return string(out)
}

// dsh run exports its session to the collector OTEL_EXPORTER_OTLP_ENDPOINT
// names, as OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and
// OTEL_EXPORTER_OTLP_HEADERS say: the turn,
// its two model calls, the read (run unasked); no text of the prompt, the
// file or the reply.
func TestTelemetryRunExports(t *testing.T) {
	r := otlptest.New(t)
	out := otelRun(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+r.Base, "OTEL_SERVICE_NAME=team-agent", "OTEL_EXPORTER_OTLP_HEADERS=x-api-key=k%3D1",
		"OTEL_RESOURCE_ATTRIBUTES=team=core")
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	names := map[string]otlptest.Span{}
	var chats int
	for _, sp := range r.Spans() {
		names[sp.Name] = sp
		if sp.Name == "chat script" && sp.Attrs["gen_ai.request.model"] == "script" {
			chats++
		}
		for k, v := range sp.Attrs {
			if s, ok := v.(string); ok && strings.Contains(s, "SECRET") {
				t.Errorf("%s: %s=%q sent", sp.Name, k, s)
			}
		}
	}
	turn, read := names["turn"], names["execute_tool read"]
	if len(r.Spans()) != 4 || turn.Resource["service.name"] != "team-agent" || turn.Resource["team"] != "core" || turn.Attrs["gen_ai.usage.input_tokens"] != int64(1850) ||
		read.Parent != turn.SpanID || read.Attrs["dsh.tool.decision"] != "allowed" || chats != 2 || names["chat script"].Parent != turn.SpanID {
		t.Errorf("spans received: %+v\ndsh printed:\n%s", r.Spans(), out)
	}
	if h := r.Headers(); len(h) == 0 || h[0].Get("X-Api-Key") != "k=1" {
		t.Errorf("headers: %v", h)
	}
	t.Logf("received %d spans in %d request(s): %s, %s …", len(r.Spans()), r.Requests(), turn.Name, read.Name)
}

// dsh acp exports its sessions too: after a prompt, the spans reach the
// collector when the editor closes the connection.
func TestTelemetryACPExports(t *testing.T) {
	r := otlptest.New(t)
	work, script, env := otelWorld(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+r.Base)
	cmd := exec.Command(dsh(t), "acp", "--provider", "script", "--script", script)
	cmd.Dir, cmd.Env = work, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	out := bufio.NewReader(outPipe)
	request := func(id int, method string, params any) map[string]any {
		t.Helper()
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: no answer: %v\n%s", method, err, stderr.String())
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result map[string]any  `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil || *msg.ID != id || msg.Method != "" {
				continue
			}
			if msg.Error != nil {
				t.Fatalf("%s: %s", method, msg.Error)
			}
			return msg.Result
		}
	}
	request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sess := request(2, "session/new", map[string]any{"cwd": work, "mcpServers": []any{}})
	request(3, "session/prompt", map[string]any{"sessionId": sess["sessionId"], "prompt": []map[string]any{{"type": "text", "text": "read it"}}})
	_ = in.Close()
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dsh acp: %v\n%s", err, stderr.String())
	}
	names := map[string]otlptest.Span{}
	for _, sp := range r.Spans() {
		names[sp.Name] = sp
	}
	turn, read := names["turn"], names["execute_tool read"]
	if turn.Attrs["gen_ai.conversation.id"] != sess["sessionId"] || read.Parent != turn.SpanID || read.Attrs["dsh.tool.decision"] != "allowed" {
		t.Errorf("spans received: %+v\n%s", r.Spans(), stderr.String())
	}
}

// With an endpoint set but the export turned off, or the variables asking
// for what dsh does not send, no request is made; the latter is told.
func TestTelemetryRunOff(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		told string
	}{
		{"OTEL_SDK_DISABLED", []string{"OTEL_SDK_DISABLED=true"}, ""},
		{"OTEL_TRACES_EXPORTER=none", []string{"OTEL_TRACES_EXPORTER=none"}, ""},
		{"grpc", []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, "dsh sends OTLP over HTTP only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := otlptest.New(t)
			out := otelRun(t, append(tt.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+r.Base)...)
			if r.Requests() != 0 {
				t.Errorf("%d requests", r.Requests())
			}
			if tt.told != "" && !strings.Contains(out, tt.told) {
				t.Errorf("dsh did not say %q:\n%s", tt.told, out)
			}
			if tt.told == "" && strings.Contains(out, "telemetry") {
				t.Errorf("dsh spoke of telemetry:\n%s", out)
			}
		})
	}
}

// A collector that takes the request and never answers does not keep dsh
// run from exiting (bounded by the session's close), and the user is told.
func TestTelemetryRunCollectorDown(t *testing.T) {
	r := otlptest.New(t)
	release := r.Hold()
	defer release()
	start := time.Now()
	out := otelRun(t, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+r.URL)
	if !strings.Contains(out, "were not sent to "+r.URL) {
		t.Errorf("dsh did not say the spans were not sent:\n%s", out)
	}
	t.Logf("dsh run exited %s after it started, the collector still holding its request", time.Since(start).Round(time.Millisecond))
}
