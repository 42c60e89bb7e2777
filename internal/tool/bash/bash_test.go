package bash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

func TestExitCodes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		command string
		code    int
		output  string
	}{
		{"true", 0, ""},
		{"echo hello", 0, "hello\n"},
		{"echo oops >&2; exit 3", 3, "oops\n"},
		{"false", 1, ""},
		{"exit 255", 255, ""},
	} {
		t.Run(tc.command, func(t *testing.T) {
			r := f.bash(tc.command)
			if r.IsError != (tc.code != 0) {
				t.Errorf("IsError = %v for exit %d", r.IsError, tc.code)
			}
			c := f.terminal(tc.command, r)
			if c.ExitCode == nil || *c.ExitCode != tc.code || c.Signal != "" || c.TimedOut {
				t.Errorf("card = %+v, want exit code %d", c, tc.code)
			}
			if c.Output != tc.output {
				t.Errorf("output = %q, want %q", c.Output, tc.output)
			}
			if tc.code != 0 {
				mustContain(t, r.TextOf(), fmt.Sprintf("Exit code %d.", tc.code))
			}
		})
	}
}

func TestInterleavedOutput(t *testing.T) {
	f := newFixture(t)
	r := f.bash("echo 1; echo 2 >&2; echo 3; echo 4 >&2")
	if got := f.terminal("", r).Output; got != "1\n2\n3\n4\n" {
		t.Errorf("output = %q", got)
	}
}

func TestStdinIsDevNull(t *testing.T) {
	f := newFixture(t)
	// cat would block forever on an inherited stdin.
	r := f.bash("cat; echo done")
	if got := f.terminal("", r).Output; got != "done\n" {
		t.Errorf("output = %q", got)
	}
}

func TestSignal(t *testing.T) {
	f := newFixture(t)
	r := f.bash("echo before; kill -9 $$")
	if !r.IsError {
		t.Error("a killed command is not an error")
	}
	c := f.terminal("", r)
	if c.ExitCode != nil || c.Signal != "SIGKILL" || c.Output != "before\n" {
		t.Errorf("card = %+v, want SIGKILL and no exit code", c)
	}
	mustContain(t, r.TextOf(), "Killed by SIGKILL.")
}

func TestTimeout(t *testing.T) {
	f := newFixture(t)
	r := f.run("bash", map[string]any{"command": "echo $$; sleep 60", "timeout_ms": 300})
	if !r.IsError {
		t.Error("a timeout is not an error")
	}
	c := f.terminal("", r)
	if !c.TimedOut || c.Signal != "SIGTERM" || c.ExitCode != nil {
		t.Errorf("card = %+v, want timed out by SIGTERM", c)
	}
	mustContain(t, r.TextOf(), "Timed out after 300ms")
	if strings.Contains(r.TextOf(), "left running") {
		t.Errorf("a timeout is reported as leftovers: %s", r.TextOf())
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(c.Output))
	if err != nil {
		t.Fatal(err)
	}
	groupGone(t, pgid)
}

func TestTimeoutEscalatesToSIGKILL(t *testing.T) {
	f := newFixture(t)
	// The ignored SIGTERM is inherited by sleep, so only SIGKILL ends the group.
	r := f.run("bash", map[string]any{"command": `trap "" TERM; echo $$; sleep 60`, "timeout_ms": 200})
	c := f.terminal("", r)
	if !c.TimedOut || c.Signal != "SIGKILL" {
		t.Errorf("card = %+v, want timed out by SIGKILL", c)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(c.Output))
	if err != nil {
		t.Fatal(err)
	}
	groupGone(t, pgid)
}

func TestTimeoutLimit(t *testing.T) {
	f := newFixture(t)
	for _, ms := range []int{0, -5, maxTimeoutMS + 1} {
		r := f.run("bash", map[string]any{"command": "true", "timeout_ms": ms})
		if !r.IsError || !strings.Contains(r.TextOf(), "timeout_ms") {
			t.Errorf("timeout_ms %d: %+v, want a refusal naming timeout_ms", ms, r)
		}
	}
	r := f.run("bash", map[string]any{"command": "true", "timeout_ms": maxTimeoutMS})
	if r.IsError {
		t.Errorf("the maximum timeout is refused: %s", r.TextOf())
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan string, 1)
	env := f.env()
	env.Progress = func(s string) {
		select {
		case started <- s:
		default:
		}
	}
	go func() {
		<-started
		cancel()
	}()
	raw, _ := json.Marshal(map[string]any{"command": "echo $$; sleep 60"})
	r := res(f.reg.Run(ctx, env, "bash", raw, nil))
	if !r.IsError {
		t.Error("a cancelled command is not an error")
	}
	mustContain(t, r.TextOf(), "Cancelled")
	if m := metaOf(t, r); !m.Cancelled || m.Signal != "SIGTERM" {
		t.Errorf("meta = %+v, want cancelled by SIGTERM", m)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(f.terminal("", r).Output))
	if err != nil {
		t.Fatal(err)
	}
	groupGone(t, pgid)
}

func TestLeftoversAreKilled(t *testing.T) {
	for _, command := range []string{
		"sleep 300 & echo $$",                         // the leftover holds the output pipe
		"sleep 300 >/dev/null 2>&1 & echo $$",         // it does not
		`(trap "" TERM; sleep 300) & echo $$`,         // it ignores SIGTERM
		"(sleep 300 & sleep 300 & wait) & echo $$",    // grandchildren
		"nohup sleep 300 >/dev/null 2>&1 & echo $$; ", // nohup ignores only SIGHUP
	} {
		t.Run(command, func(t *testing.T) {
			f := newFixture(t)
			r := f.bash(command)
			if r.IsError {
				t.Fatalf("error: %s", r.TextOf())
			}
			mustContain(t, r.TextOf(), "left running were killed")
			pgid, err := strconv.Atoi(strings.TrimSpace(f.terminal("", r).Output))
			if err != nil {
				t.Fatal(err)
			}
			groupGone(t, pgid)
		})
	}
}

func TestNoLeftoverNote(t *testing.T) {
	f := newFixture(t)
	r := f.bash("sleep 0.1 & wait; echo ok")
	if strings.Contains(r.TextOf(), "killed") {
		t.Errorf("a command that waited for its children is said to leave some: %s", r.TextOf())
	}
}

func TestHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1 GiB")
	}
	f := newFixture(t)
	var emitted int
	env := f.env()
	env.Progress = func(s string) { emitted += len(s) }
	const size = 1 << 30
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	raw, _ := json.Marshal(map[string]any{"command": fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a; echo; echo end`, size)})
	r := res(f.reg.Run(context.Background(), env, "bash", raw, nil))

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// Sys is what the Go runtime ever got from the OS, so it bounds the peak.
	if grown := int64(after.Sys) - int64(before.Sys); grown > 64<<20 {
		t.Errorf("memory obtained from the OS grew by %d MiB while printing 1 GiB", grown>>20)
	}
	out := f.terminal("", r).Output
	want := fmt.Sprintf("… %d bytes omitted …", size+len("\nend\n")-outputHead-outputTail)
	mustContain(t, out, want)
	if !strings.HasPrefix(out, strings.Repeat("a", outputHead)+"\n…") || !strings.HasSuffix(out, "a\nend\n") {
		t.Errorf("output is not the head and the tail: starts %q, ends %q", out[:20], out[len(out)-20:])
	}
	if len(out) > outputHead+outputTail+100 {
		t.Errorf("the model gets %d bytes", len(out))
	}
	if emitted == 0 || emitted > 64<<20 {
		t.Errorf("live chunks carried %d bytes of 1 GiB; want a bounded, non-empty stream", emitted)
	}
}

func TestInvalidUTF8(t *testing.T) {
	f := newFixture(t)
	r := f.bash(`printf 'a\377b\303\251'`)
	if got := f.terminal("", r).Output; got != "a\uFFFDbé" {
		t.Errorf("output = %q", got)
	}
}

func TestLiveChunksAreCoalesced(t *testing.T) {
	f := newFixture(t)
	r := f.bash("timeout 1 yes")
	if c := f.terminal("", r); c.ExitCode == nil || *c.ExitCode != 124 {
		t.Fatalf("card = %+v", c)
	}
	// One second at one chunk per 50 ms, plus the final flush and some slack.
	if n := len(f.emits); n == 0 || n > 25 {
		t.Errorf("%d live chunks for one second of output, want 1..25", n)
	}
}

func TestLiveChunksAreComplete(t *testing.T) {
	f := newFixture(t)
	// é is split across two writes, and the writes straddle flushes.
	f.bash(`for i in 1 2 3; do echo $i; sleep 0.07; done; printf '\303'; sleep 0.07; printf '\251\n'`)
	if got := strings.Join(f.emits, ""); got != "1\n2\n3\né\n" {
		t.Errorf("live chunks %q join to %q", f.emits, got)
	}
	if len(f.emits) < 2 {
		t.Errorf("output spread over 0.3 s arrived in %d chunk(s)", len(f.emits))
	}
}

func TestNoProgressListener(t *testing.T) {
	f := newFixture(t)
	env := f.env()
	env.Progress = nil
	raw, _ := json.Marshal(map[string]any{"command": "echo quiet"})
	r := res(f.reg.Run(context.Background(), env, "bash", raw, nil))
	if got := f.terminal("", r).Output; got != "quiet\n" {
		t.Errorf("output = %q", got)
	}
}

func TestScrubbedEnvironment(t *testing.T) {
	for name, value := range map[string]string{
		"FAKE_API_KEY":          "k1",
		"GITHUB_TOKEN":          "k2",
		"DB_PASSWORD":           "k3",
		"AWS_SECRET_ACCESS_KEY": "k4",
		"AWS_REGION":            "k5",
		"CLIENT_SECRET":         "k6",
		"DATABASE_URL":          "postgres://app:k7@db/app",
		"SSH_AUTH_SOCK":         "/tmp/agent.k8",
		"KEPT_TOKEN":            "kept",
		"PLAIN_SETTING":         "plain",
	} {
		t.Setenv(name, value)
	}
	f := newFixture(t, Options{KeepEnv: []string{"KEPT_TOKEN"}})
	out := f.terminal("", f.bash("env")).Output
	for _, leaked := range []string{"FAKE_API_KEY=", "GITHUB_TOKEN=", "DB_PASSWORD=", "AWS_SECRET_ACCESS_KEY=", "AWS_REGION=", "CLIENT_SECRET=", "DATABASE_URL=", "SSH_AUTH_SOCK="} {
		if strings.Contains(out, leaked) {
			t.Errorf("%s reached the command", leaked)
		}
	}
	mustContain(t, out, "KEPT_TOKEN=kept")
	mustContain(t, out, "PLAIN_SETTING=plain")
}

// The scrubbed environment is kept between commands; a change to dsh's
// environment must reach the next command, scrubbed too.
func TestScrubbedEnvironmentFollowsChanges(t *testing.T) {
	f := newFixture(t)
	mustContain(t, f.terminal("", f.bash("echo \"[$LATER_SETTING]\"")).Output, "[]")
	t.Setenv("LATER_SETTING", "now")
	t.Setenv("LATER_API_KEY", "leak")
	out := f.terminal("", f.bash("env")).Output
	mustContain(t, out, "LATER_SETTING=now")
	if strings.Contains(out, "LATER_API_KEY") {
		t.Error("a secret set after the first command reached the second")
	}
}

func TestCwdCarriesOver(t *testing.T) {
	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.bash("cd a/b")
	if got := f.sess.Workspace.Cwd(); got != filepath.Join(f.root, "a", "b") {
		t.Fatalf("cwd = %s after cd a/b", got)
	}
	r := f.bash("pwd; cd ..")
	if got := f.terminal("", r).Output; got != filepath.Join(f.root, "a", "b")+"\n" {
		t.Errorf("the next command ran in %q", got)
	}
	if m := metaOf(t, r); m.Cwd != filepath.Join("a", "b") {
		t.Errorf("meta cwd = %q", m.Cwd)
	}
	if got := f.sess.Workspace.Cwd(); got != filepath.Join(f.root, "a") {
		t.Errorf("cwd = %s after cd ..", got)
	}
	// A failing command's cd carries over too: the shell's directory is what it is.
	f.bash("cd /; cd " + f.root + "; false")
	if got := f.sess.Workspace.Cwd(); got != f.root {
		t.Errorf("cwd = %s, want the root", got)
	}
}

func TestCwdConfinedToWorkspace(t *testing.T) {
	f := newFixture(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.root, "out")); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"cd ..", "cd /", "cd out"} {
		r := f.bash(command)
		if got := f.sess.Workspace.Cwd(); got != f.root {
			t.Errorf("%q moved the cwd out of the workspace to %s", command, got)
		}
		mustContain(t, r.TextOf(), "The working directory stays "+f.root+": the command ended in ")
		if r.IsError {
			t.Errorf("%q: a cd that is not carried over is not a failure", command)
		}
	}
	if got := f.terminal("", f.bash("pwd")).Output; got != f.root+"\n" {
		t.Errorf("next command ran in %q", got)
	}
}

func TestCommandSeesNoWrapper(t *testing.T) {
	f := newFixture(t)
	r := f.bash(`echo "[$#][$1][${__dsh_c-unset}]"; ls -l /proc/self/fd/3 2>&1 >/dev/null | grep -c 'No such'`)
	if got := f.terminal("", r).Output; got != "[0][][unset]\n1\n" {
		t.Errorf("output = %q", got)
	}
}

func TestSpawnFailure(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.root, "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f.bash("cd gone")
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	r := f.bash("echo hi")
	if !r.IsError || !strings.Contains(r.TextOf(), "Could not start") {
		t.Errorf("result = %+v, want a start failure", r)
	}
	raw, _ := json.Marshal(map[string]any{"command": "echo hi"})
	if c := f.reg.PresentResult("bash", raw, r); c != nil {
		t.Errorf("a command that never ran has a card: %#v", c)
	}
}

func TestTerminalCards(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"terminal_ok", map[string]any{"command": "echo hello; echo world >&2", "description": "Greet"}},
		{"terminal_failing", map[string]any{"command": "echo 'no such thing' >&2; exit 2"}},
		{"terminal_signal", map[string]any{"command": "echo bye; kill -KILL $$"}},
		{"terminal_timeout", map[string]any{"command": "echo waiting; sleep 60", "timeout_ms": 200}},
		{"background", map[string]any{"command": "sleep 60", "description": "Sleep", "run_in_background": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			raw, _ := json.Marshal(tc.args)
			r := res(f.reg.Run(context.Background(), f.env(), "bash", raw, nil))

			golden(t, tc.name+".json", cardsJSON(t, f.reg.PresentCall("bash", raw, nil), f.reg.PresentResult("bash", raw, r)))
		})
	}
}

func TestPresentResultNarrowsMeta(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"command": "x"})
	reg := newFixture(t).reg
	text := []card.Content{card.Text("héllo\nExit code 1.")}
	for _, tc := range []struct {
		name string
		meta string
		ok   bool
	}{
		{"exit code", `{"exitCode":1,"cwd":".","outputLength":7}`, true},
		{"signal", `{"signal":"SIGKILL","cwd":".","outputLength":0}`, true},
		{"no meta", ``, false},
		{"not an object", `[1]`, false},
		{"no output length", `{"exitCode":1}`, false},
		{"output length too long", `{"exitCode":1,"outputLength":99}`, false},
		{"output length negative", `{"exitCode":1,"outputLength":-1}`, false},
		{"output length mid-rune", `{"exitCode":1,"outputLength":2}`, false},
		{"neither code nor signal", `{"outputLength":0}`, false},
		{"both code and signal", `{"exitCode":1,"signal":"SIGKILL","outputLength":0}`, false},
		{"mistyped exit code", `{"exitCode":"1","outputLength":0}`, false},
		{"mistyped timeout", `{"exitCode":1,"timedOut":"yes","outputLength":0}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tool.Result{Content: text, IsError: true, Meta: []byte(tc.meta)}
			c := reg.PresentResult("bash", raw, r)
			if (c != nil) != tc.ok {
				t.Fatalf("card = %#v, want present: %v", c, tc.ok)
			}
			if tc.ok && tc.name == "exit code" && c.(*card.TerminalResult).Output != "héllo\n" {
				t.Errorf("output = %q", c.(*card.TerminalResult).Output)
			}
		})
	}
}

func TestToolsContract(t *testing.T) {
	ts := Tools()
	want := []struct {
		name     string
		readOnly bool
		perm     tool.Permission
		kind     card.ToolKind
	}{
		{"bash", false, tool.PermExecute, card.ToolExecute},
		{"job_output", true, tool.PermNone, card.ToolExecute},
		{"job_kill", false, tool.PermExecute, card.ToolExecute},
		{"job_list", true, tool.PermNone, card.ToolOther},
	}
	if len(ts) != len(want) {
		t.Fatalf("%d tools", len(ts))
	}
	for i, w := range want {
		tl := ts[i]
		if tl.Name() != w.name || tl.ReadOnly() != w.readOnly || tl.Permission() != w.perm || tl.Kind() != w.kind || strings.TrimSpace(tl.Description()) == "" {
			t.Errorf("tool %d = %s ro=%v perm=%v kind=%s", i, tl.Name(), tl.ReadOnly(), tl.Permission(), tl.Kind())
		}
	}
}
