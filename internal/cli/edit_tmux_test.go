package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEditPromptInTmux: Ctrl-G hands the prompt to the user's editor and the
// prompt is what the editor left; Enter sends it as typed.
func TestEditPromptInTmux(t *testing.T) {
	tmp, bin := tmuxBinary(t)
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// The "editor" keeps what it was given and adds a line, as a user would.
	editor := filepath.Join(tmp, "ed.sh")
	writeFile(t, editor, "#!/bin/sh\n{ cat \"$1\"; printf ' and the editor added this\\n'; } > \"$1.new\" && mv \"$1.new\" \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "echo.json")
	writeFile(t, script, `{"turns": [{"echo_request": true}]}`)
	p := &tmuxPane{t: t, socket: fmt.Sprintf("dsh-edit-%d", os.Getpid()), target: "edit"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	env := []string{"XDG_STATE_HOME=" + filepath.Join(tmp, "state"), "HOME=" + filepath.Join(tmp, "home"),
		"TERM=xterm-256color", "VISUAL=" + editor}
	p.tmux("new-session", "-d", "-s", p.target, "-x", "100", "-y", "30",
		fmt.Sprintf("cd %s && env %s %s --color never --provider script --script %s; echo \"dsh exited $?\"; sleep 600",
			ws, strings.Join(env, " "), bin, script))
	p.waitFor("the input", regexp.MustCompile(`Ask dsh`))
	p.typeText("a draft", "C-g")
	p.waitFor("the edited prompt", regexp.MustCompile(`› a draft and the editor added this`))
	p.typeText("", "Enter")
	p.waitFor("the model to get the edited prompt", regexp.MustCompile(`user: a draft and the editor added this`))
}
