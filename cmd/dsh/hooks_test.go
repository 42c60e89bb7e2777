package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// keepGoing is the popular "keep going" Stop hook, written as its authors
// write it for Claude Code: it reads the last assistant message from the
// transcript with grep and jq and keeps the turn going until it says DONE.
// It also notes what it read and where, for the test.
const keepGoing = `#!/bin/bash
input=$(cat)
transcript=$(jq -r '.transcript_path' <<<"$input")
echo "$transcript" > "$HOOK_NOTES/transcript_path"
last=$(grep '"role":"assistant"' "$transcript" | tail -1 | jq -r '.message.content | map(select(.type == "text")) | map(.text) | join("\n")')
echo "$last" >> "$HOOK_NOTES/seen"
if grep -q DONE <<<"$last"; then
  exit 0
fi
jq -n --arg last "$last" '{decision: "block", reason: ("Keep going: you said \"" + $last + "\" but not DONE.")}'
`

// hookWorld is a home and a workspace laid out as a Claude Code user's: a
// Stop hook in the user's ~/.claude/settings.json, and settings dsh must not
// stop for: a timeout Claude Code takes (10000 s) in that file and in the
// user's config.toml, a project's settings.json that links to /dev/zero and a
// settings.local.json that is not JSON (the project is not trusted). A
// prompt hook in config.toml asks the model at each stop too.
type hookWorld struct {
	home, work, notes, script string
	env                       []string
}

func newHookWorld(t *testing.T) hookWorld {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is not installed")
		}
		t.Skip("jq is not installed")
	}
	w := hookWorld{home: t.TempDir(), work: t.TempDir(), notes: t.TempDir()}
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	hook := filepath.Join(w.home, "hooks", "keep-going.sh")
	write(hook, keepGoing, 0o755)
	write(filepath.Join(w.home, ".claude", "settings.json"),
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "`+hook+`", "timeout": 10000}]}]}}`, 0o644)
	write(filepath.Join(w.home, ".config", "dsh", "config.toml"),
		"[[hooks.PreCompact]]\nhooks = [{ command = \"true\", timeout = 10000 }]\n"+
			"[[hooks.Stop]]\nhooks = [{ type = \"prompt\", prompt = \"Is the work done? $ARGUMENTS\" }]\n", 0o644)
	if err := os.MkdirAll(filepath.Join(w.work, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(w.work, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(w.work, ".claude", "settings.local.json"), `{"hooks": {`, 0o644)
	w.script = filepath.Join(w.notes, "script.json")
	// The prompt hook's questions are answered by the turns that match them.
	write(w.script, `{"turns": [{"text": "working on it"}, {"text": "all DONE"},
		{"match": "Is the work done?", "text": "{\"ok\": true}"}, {"match": "Is the work done?", "text": "{\"ok\": true}"}]}`, 0o644)
	w.env = append(os.Environ(), "HOME="+w.home, "XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(w.home, "state"), "HOOK_NOTES="+w.notes)
	return w
}

// check checks what the Stop hook read: the first assistant message, then
// the second, from a transcript outside the workspace that only the user
// can read.
func (w hookWorld) check(t *testing.T) {
	t.Helper()
	seen, err := os.ReadFile(filepath.Join(w.notes, "seen"))
	if err != nil {
		t.Fatalf("the Stop hook did not run: %v", err)
	}
	if string(seen) != "working on it\nall DONE\n" {
		t.Errorf("the Stop hook read %q, want the two assistant messages in turn", seen)
	}
	p, err := os.ReadFile(filepath.Join(w.notes, "transcript_path"))
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSpace(string(p))
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || strings.HasPrefix(path, w.work+"/") {
		t.Errorf("transcript %s: %v %v", path, fi.Mode(), err)
	}
	t.Logf("the Stop hook read, in turn:\n%s", seen)
}

// TestStopHookReadsTranscriptRun: through dsh run, the Stop hook reads the
// last assistant message from transcript_path, keeps the turn going once,
// and lets it end at DONE; the settings dsh cannot use are told, not fatal.
func TestStopHookReadsTranscriptRun(t *testing.T) {
	w := newHookWorld(t)
	cmd := exec.Command(dsh(t), "run", "--script", w.script, "finish the work")
	cmd.Dir, cmd.Env = w.work, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dsh run: %v\n%s", err, out)
	}
	for _, want := range []string{
		`Kept the turn going: Keep going: you said "working on it" but not DONE.`,
		"all DONE",
		"hooks.PreCompact[0].hooks[0].timeout: 10000 seconds is more than dsh waits for a hook; it waits 600",
		".claude/settings.json: hooks.Stop[0].hooks[0].timeout: 10000 seconds",
		".claude/settings.json is a symlink to /dev/zero",
		"settings.local.json: jsontext: unexpected EOF",
		"● Stop hook: prompt: Is the work done? $ARGUMENTS",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dsh run printed no %q:\n%s", want, out)
		}
	}
	w.check(t)
	t.Logf("dsh run printed:\n%s", out)
}

// TestStopHookReadsTranscriptACP: the same through dsh acp.
func TestStopHookReadsTranscriptACP(t *testing.T) {
	w := newHookWorld(t)
	cmd := exec.Command(dsh(t), "acp", "--provider", "script", "--script", w.script)
	cmd.Dir, cmd.Env = w.work, w.env
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
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dsh's stderr: %s", stderr.String())
		}
	})
	out := bufio.NewReader(outPipe)
	var said []string // the agent's message chunks and the hook cards' titles
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
				t.Fatalf("%s: no answer: %v", method, err)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result map[string]any  `json:"result"`
				Error  json.RawMessage `json:"error"`
				Params struct {
					Update struct {
						Kind    string `json:"sessionUpdate"`
						Title   string `json:"title"`
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"update"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &msg); err != nil {
				continue
			}
			if u := msg.Params.Update; msg.Method == "session/update" {
				switch u.Kind {
				case "agent_message_chunk":
					said = append(said, u.Content.Text)
				case "tool_call":
					said = append(said, "["+u.Title+"]")
				}
			}
			if msg.ID == nil || *msg.ID != id || msg.Method != "" {
				continue
			}
			if msg.Error != nil {
				t.Fatalf("%s: %s", method, msg.Error)
			}
			return msg.Result
		}
	}
	request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sess := request(2, "session/new", map[string]any{"cwd": w.work, "mcpServers": []any{}})
	res := request(3, "session/prompt", map[string]any{"sessionId": sess["sessionId"],
		"prompt": []map[string]any{{"type": "text", "text": "finish the work"}}})
	if res["stopReason"] != "end_turn" {
		t.Errorf("stop reason %v", res["stopReason"])
	}
	all := strings.Join(said, "")
	if !strings.Contains(all, "working on it") || !strings.Contains(all, "all DONE") || !strings.Contains(all, "Stop hook") ||
		!strings.Contains(all, "it waits 600") || !strings.Contains(all, "symlink to /dev/zero") {
		t.Errorf("the client was told %q", said)
	}
	w.check(t)
	t.Logf("the client was told: %q", said)
}
