package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestAttachAnswersTheChatsPrompt drives two real terminals: a chat waits on
// a permission prompt; dsh attach, in another, joins the session, shows the
// conversation so far and the same prompt, and answers it; the chat's prompt
// ends and both show the command's result. A prompt typed in the attached
// terminal runs in the chat's session. The log says the answer came from
// "attach".
func TestAttachAnswersTheChatsPrompt(t *testing.T) {
	tmp, bin := tmuxBinary(t)
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "script.json")
	writeFile(t, script, `{"turns": [
		{"text": "Running it.", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "touch approved && echo approved-and-ran"}}]},
		{"text": "The first turn is done."},
		{"text": "Second prompt answered."}
	]}`)
	chat := &tmuxPane{t: t, socket: fmt.Sprintf("dsh-attach-%d", os.Getpid()), target: "chat"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", chat.socket, "kill-server").Run() })
	att := &tmuxPane{t: t, socket: chat.socket, target: "attach"}
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "HOME=" + filepath.Join(tmp, "home"), "TERM=xterm-256color"}
	start := func(p *tmuxPane, args string) {
		cmd := fmt.Sprintf("cd %s && env %s %s %s; echo \"dsh exited $?\"; sleep 600", ws, strings.Join(env, " "), bin, args)
		p.tmux("new-session", "-d", "-s", p.target, "-x", "100", "-y", "50", cmd)
	}

	start(chat, "--color never --provider script --script "+script)
	chat.waitFor("the input", regexp.MustCompile(`Ask dsh`))
	chat.typeText("hello from the chat", "Enter")
	chat.waitFor("the permission prompt", regexp.MustCompile(`Allow bash\?[\s\S]*\[y\] yes, once`))

	start(att, "attach --color never")
	att.waitFor("the conversation so far and the same prompt", regexp.MustCompile(`› hello from the chat[\s\S]*joined session \S+, live in another dsh[\s\S]*Allow bash\?[\s\S]*\[y\] yes, once`))
	time.Sleep(time.Second) // a deliberate answer: keys typed at once are typing ahead
	att.typeText("y")
	att.waitFor("the approved command's result", regexp.MustCompile(`allowed once from attach[\s\S]*approved-and-ran[\s\S]*The first turn is done\.`))
	chat.waitFor("the chat's prompt to end and the result", regexp.MustCompile(`allowed once from attach[\s\S]*approved-and-ran[\s\S]*The first turn is done\.`))
	if s := chat.screen(); strings.Contains(s, "[y] yes, once") {
		t.Errorf("the chat still asks:\n%s", s)
	}

	att.typeText("from the attached terminal", "Enter")
	chat.waitFor("the attached prompt in the chat", regexp.MustCompile(`› from the attached terminal[\s\S]*Second prompt answered\.`))
	att.waitFor("its answer in the attached terminal", regexp.MustCompile(`Second prompt answered\.`))

	// Leaving the attached chat leaves the session running.
	time.Sleep(2100 * time.Millisecond) // so /exit's keys are not a second Ctrl-C's
	att.typeText("/exit", "Enter")
	att.waitFor("attach to leave", regexp.MustCompile(`left session (\S+); it goes on[\s\S]*dsh exited 0`))
	if s := chat.screen(); strings.Contains(s, "dsh exited") {
		t.Fatalf("the chat ended when attach left:\n%s", s)
	}

	logs, err := filepath.Glob(filepath.Join(tmp, "state", "dsh", "sessions", "*.jsonl"))
	if err != nil || len(logs) != 1 {
		t.Fatalf("logs %v (%v), want the chat's", logs, err)
	}
	recs, err := session.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	var from []string
	for _, r := range recs {
		if r.Type == session.TypeDecision {
			from = append(from, r.Decision+" from "+r.From)
		}
	}
	if fmt.Sprint(from) != "[allow from attach]" {
		t.Errorf("decisions %v, want the allow dsh attach gave", from)
	}
}
