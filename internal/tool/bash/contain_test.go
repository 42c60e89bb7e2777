package bash

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// TestEscapeesDoNotOutliveTheCall: processes that leave the command's process
// group are still killed when the call ends; before the supervisor, setsid -f
// survived the call.
func TestEscapeesDoNotOutliveTheCall(t *testing.T) {
	for _, command := range []string{
		"setsid -f sleep MARK",
		"(setsid sleep MARK &)",
		"(setsid bash -c 'sleep MARK & sleep MARK & wait' &); sleep 0.2",
		`setsid -f bash -c 'trap "" TERM HUP; exec sleep MARK' >/dev/null 2>&1`,
	} {
		t.Run(command, func(t *testing.T) {
			mark := proctest.Marker()
			f := newFixture(t)
			r := f.bash(strings.ReplaceAll(command, "MARK", mark))
			if r.IsError {
				t.Fatalf("error: %s", r.TextOf())
			}
			mustContain(t, r.TextOf(), "left running were killed")
			proctest.NoneRunning(t, mark)
		})
	}
}

// TestEscapeesDieWithTheirJob: a background job's escapees live as long as the
// job, and die when it is killed or the session ends.
func TestEscapeesDieWithTheirJob(t *testing.T) {
	for _, end := range []string{"job_kill", "session end"} {
		t.Run(end, func(t *testing.T) {
			mark := proctest.Marker()
			f := newFixture(t)
			id := f.startJob(fmt.Sprintf("setsid -f sleep %s; (setsid sleep %s &); sleep %s", mark, mark, mark))
			proctest.WaitRunning(t, mark, 3)
			if end == "job_kill" {
				if r := f.run("job_kill", map[string]any{"job_id": id}); r.IsError {
					t.Fatal(r.TextOf())
				}
			} else if err := f.sess.Close(); err != nil {
				t.Fatal(err)
			}
			proctest.NoneRunning(t, mark)
		})
	}
}

// TestTimeoutKillsEscapees: a timed-out command's escapees go with it.
func TestTimeoutKillsEscapees(t *testing.T) {
	mark := proctest.Marker()
	f := newFixture(t)
	r := f.run("bash", map[string]any{"command": fmt.Sprintf(`setsid -f bash -c 'trap "" TERM; sleep %s'; sleep %s`, mark, mark), "timeout_ms": 500})
	if !f.terminal("", r).TimedOut {
		t.Fatalf("not timed out: %s", r.TextOf())
	}
	proctest.NoneRunning(t, mark)
}

// TestCommandKillsItsSupervisor: a command that kills its supervisor to free
// its escapees does not: dsh, a subreaper, adopts and kills them.
func TestCommandKillsItsSupervisor(t *testing.T) {
	for _, sig := range []string{"KILL", "STOP"} {
		t.Run(sig, func(t *testing.T) {
			mark := proctest.Marker()
			f := newFixture(t)
			r := f.run("bash", map[string]any{"command": fmt.Sprintf("setsid -f sleep %s; kill -%s $PPID; sleep %s", mark, sig, mark), "timeout_ms": 1000})
			if !r.IsError {
				t.Errorf("the call succeeded: %s", r.TextOf())
			}
			proctest.NoneRunning(t, mark)
		})
	}
}
