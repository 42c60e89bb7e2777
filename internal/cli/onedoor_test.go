package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestOneDoor: the chat, dsh run and dsh acp hand what the user typed to the
// host's one door, so the same inputs — a custom command, an @file and an
// image, an MCP server's prompt, a built-in command — leave the same records
// in the three logs: the input as typed, its expansion and attachments beside
// it, and a built-in command's answer.
func TestOneDoor(t *testing.T) {
	everything := npmBin(t, "mcp-server-everything")
	tmp, bin := tmuxBinary(t)
	ws := filepath.Join(tmp, "ws")
	for _, d := range []string{filepath.Join(ws, ".dsh", "commands"), filepath.Join(tmp, "xdg", "dsh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, ".dsh", "commands", "greet.md"), "---\ndescription: greet someone\n---\nSay hello to $ARGUMENTS.\n")
	writeFile(t, filepath.Join(ws, "b.txt"), "the contents of b\n")
	writePNGFile(t, filepath.Join(ws, "shot.png"))
	writeFile(t, filepath.Join(tmp, "xdg", "dsh", "config.toml"), "[mcp.everything]\ncommand = \""+everything+"\"\nargs = [\"stdio\"]\n")
	script := filepath.Join(tmp, "echo.json")
	writeFile(t, script, `{"turns": [{"echo_request": true}, {"echo_request": true}, {"echo_request": true}]}`)

	inputs := []string{
		"/greet the world",
		"see @b.txt and @shot.png, please",
		"/mcp__everything__simple-prompt",
		"/cost",
	}
	env := func(state string) []string {
		return []string{"HOME=" + filepath.Join(tmp, "home"), "XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"),
			"XDG_STATE_HOME=" + filepath.Join(tmp, state), "PATH=" + os.Getenv("PATH"), "NO_COLOR=1", "TERM=xterm-256color"}
	}
	flags := []string{"--mode", "bypass", "--provider", "script", "--script", script}

	// dsh run: one process per input, each going on with the session (-c).
	for i, in := range inputs {
		args := append([]string{"run"}, flags...)
		if i > 0 {
			args = append(args, "-c")
		}
		cmd := exec.Command(bin, append(args, in)...)
		cmd.Dir, cmd.Env = ws, env("run")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("dsh run %q: %v\n%s", in, err, out)
		}
	}

	// dsh acp: one session, a prompt per input, over JSON-RPC on stdio.
	acpSession(t, bin, ws, env("acp"), flags, inputs)

	// The chat, in a real terminal.
	p := &tmuxPane{t: t, socket: fmt.Sprintf("dsh-door-%d", os.Getpid()), target: "door"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	p.tmux("new-session", "-d", "-s", p.target, "-x", "120", "-y", "40",
		fmt.Sprintf("cd %s && env %s %s --color never %s; echo \"dsh exited $?\"; sleep 600",
			ws, strings.Join(env("chat"), " "), bin, strings.Join(flags, " ")))
	p.waitFor("the input", regexp.MustCompile(`Ask dsh`))
	done := 0
	for _, in := range inputs {
		p.typeText(in, "Enter")
		if in == "/cost" {
			p.waitFor("the answer to /cost", regexp.MustCompile(`This session used`))
			continue
		}
		done++
		p.waitFor(fmt.Sprintf("turn %d to end", done), regexp.MustCompile(fmt.Sprintf(`(?s)(· done.*){%d}`, done)))
	}
	p.typeText("/exit", "Enter")
	p.waitFor("dsh to exit", regexp.MustCompile(`dsh exited 0`))

	logs := map[string][]string{}
	for _, who := range []string{"run", "acp", "chat"} {
		logs[who] = inputRecords(t, filepath.Join(tmp, who, "dsh", "sessions"))
	}
	if len(logs["run"]) != len(inputs)+1 { // four inputs, and /cost's reply
		t.Fatalf("dsh run logged %d input records, want %d:\n%s", len(logs["run"]), len(inputs)+1, strings.Join(logs["run"], "\n"))
	}
	for _, who := range []string{"acp", "chat"} {
		if !slices.Equal(logs[who], logs["run"]) {
			t.Errorf("%s logged\n%s\n--- dsh run logged\n%s", who, strings.Join(logs[who], "\n"), strings.Join(logs["run"], "\n"))
		}
	}
	want := []string{
		`user "/greet the world" [expansion /greet "Say hello to the world.\n"]`,
		`user "see @b.txt and @shot.png, please" [resource b.txt "the contents of b\n" image shot.png image/png`,
		`user "/mcp__everything__simple-prompt" [expansion /mcp__everything__simple-prompt "This is a simple prompt without arguments."]`,
		`command "/cost" []`,
		`reply "This session used`,
	}
	for i, w := range want {
		if i >= len(logs["run"]) || !strings.HasPrefix(logs["run"][i], w) {
			t.Errorf("record %d: want %s…", i, w)
		}
	}
	for _, l := range logs["run"] {
		t.Log(l)
	}
}

// inputRecords are the user, command and reply records of the one session
// logged in dir, each as a line: its type, text and content (an image by the
// hash of its data).
func inputRecords(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("want one session in %s, found %v (%v)", dir, paths, err)
	}
	recs, err := session.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if r.Type != session.TypeUser && r.Type != session.TypeCommand && r.Type != session.TypeReply {
			continue
		}
		var parts []string
		for _, c := range r.Content {
			s := fmt.Sprintf("%s %s %q", c.Type, c.URI, c.Text)
			if c.Data != "" {
				sum := sha256.Sum256([]byte(c.Data))
				s = fmt.Sprintf("%s %s %s %s", c.Type, c.URI, c.MimeType, hex.EncodeToString(sum[:6]))
			}
			parts = append(parts, s)
		}
		out = append(out, fmt.Sprintf("%s %q [%s]", r.Type, r.Text, strings.Join(parts, " ")))
	}
	return out
}

// acpSession runs dsh acp, opens a session in ws and sends each input as a
// prompt's text, waiting for each answer; it returns the session/update
// notifications dsh sent, as they came.
func acpSession(t *testing.T, bin, ws string, env, flags, inputs []string) (updates []string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"acp"}, flags...)...)
	cmd.Dir, cmd.Env = ws, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(outPipe)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	id := 0
	call := func(method string, params any) jsontext.Value {
		t.Helper()
		id++
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var msg struct {
				ID     *int           `json:"id"`
				Method string         `json:"method"`
				Result jsontext.Value `json:"result"`
				Error  jsontext.Value `json:"error"`
			}
			if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
				t.Fatalf("dsh acp wrote %q: %v", lines.Text(), err)
			}
			if msg.Method == "session/update" {
				updates = append(updates, lines.Text())
			}
			if msg.ID == nil || msg.Method != "" || *msg.ID != id {
				continue // an update, or a request the test does not expect
			}
			if len(msg.Error) > 0 {
				t.Fatalf("%s: %s\n%s", method, msg.Error, stderr.String())
			}
			return msg.Result
		}
		t.Fatalf("dsh acp ended before answering %s: %v\n%s", method, lines.Err(), stderr.String())
		return nil
	}
	call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &sess); err != nil {
		t.Fatal(err)
	}
	for _, text := range inputs {
		call("session/prompt", map[string]any{"sessionId": sess.SessionID,
			"prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	_ = in.Close()
	done := make(chan error, 1)
	go func() { _, _ = io.Copy(io.Discard, outPipe); done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dsh acp: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("dsh acp did not exit when its input closed")
	}
	return updates
}

// writePNGFile writes a small PNG image.
func writePNGFile(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
