package bash

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
)

// startJob starts a background job and returns its id.
func (f *fixture) startJob(command string) string {
	f.t.Helper()
	r := f.run("bash", map[string]any{"command": command, "run_in_background": true})
	if r.IsError {
		f.t.Fatalf("start %q: %s", command, r.TextOf())
	}
	var m meta
	if err := json.Unmarshal(r.Meta, &m); err != nil || m.JobID == "" {
		f.t.Fatalf("meta %s: %v", r.Meta, err)
	}
	return m.JobID
}

func (f *fixture) jobOutput(id string, waitMS int) string {
	f.t.Helper()
	r := f.run("job_output", map[string]any{"job_id": id, "wait_ms": waitMS})
	if r.IsError {
		f.t.Fatalf("job_output %s: %s", id, r.TextOf())
	}
	return r.TextOf()
}

// pgidOf reads the process group a job printed as its first line ($$).
func pgidOf(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^pgid=(\d+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pgid in %q", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestJobOutputAfterExit(t *testing.T) {
	f := newFixture(t)
	id := f.startJob("echo one; echo two >&2; exit 4")
	out := f.jobOutput(id, 60_000)
	if want := id + ": exited 4\none\ntwo\n"; out != want {
		t.Errorf("job_output = %q, want %q", out, want)
	}
	if out := f.jobOutput(id, 0); out != id+": exited 4\n(no new output)" {
		t.Errorf("second job_output = %q", out)
	}
}

func TestJobOutputIncremental(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	// The job prints one line per file the test creates, so the test decides
	// what is new between two reads.
	id := f.startJob(fmt.Sprintf(`for i in 1 2; do while [ ! -e %[1]s/$i ]; do sleep 0.01; done; echo line$i; done`, dir))
	touch := func(name string) { f.bash("touch " + dir + "/" + name) }
	touch("1")
	waitFor(t, func() bool { return strings.Contains(peek(f, id), "line1") })
	if out := f.jobOutput(id, 0); out != id+": running\nline1\n" {
		t.Errorf("first job_output = %q", out)
	}
	touch("2")
	if out := f.jobOutput(id, 60_000); out != id+": exited 0\nline2\n" {
		t.Errorf("second job_output = %q, want only what is new", out)
	}
}

func TestJobKill(t *testing.T) {
	f := newFixture(t)
	id := f.startJob("echo pgid=$$; sleep 300 & sleep 300")
	waitFor(t, func() bool { return strings.Contains(peek(f, id), "pgid=") })
	pgid := pgidOf(t, f.jobOutput(id, 0))
	r := f.run("job_kill", map[string]any{"job_id": id})
	if r.IsError {
		t.Fatal(r.TextOf())
	}
	mustContain(t, r.TextOf(), "killed by SIGTERM")
	mustContain(t, r.TextOf(), "job_output") // the model is told where the rest is
	raw, _ := json.Marshal(map[string]any{"job_id": id})
	if c, ok := f.reg.PresentResult("job_kill", raw, r).(*card.GenericResult); !ok || len(c.Content) != 1 ||
		!strings.HasSuffix(c.Content[0].Text, ": killed by SIGTERM.") {
		t.Errorf("the card says how the job ended, in the user's words: %+v", c)
	}
	groupGone(t, pgid)
	mustContain(t, f.jobOutput(id, 0), ": killed by SIGTERM (job_kill)")
	r = f.run("job_kill", map[string]any{"job_id": id})
	mustContain(t, r.TextOf(), "already finished")
}

func TestJobsBelongToTheirSession(t *testing.T) {
	a, b := newFixture(t), newFixture(t)
	a.startJob("true") // ids are per session: a's second job has no namesake in b
	id := a.startJob("echo pgid=$$; sleep 300")
	waitFor(t, func() bool { return strings.Contains(peek(a, id), "pgid=") })
	pgid := pgidOf(t, a.jobOutput(id, 0))
	bID := b.startJob("true")

	for _, name := range []string{"job_output", "job_kill"} {
		r := b.run(name, map[string]any{"job_id": id})
		if !r.IsError {
			t.Errorf("%s of another session's job: %s", name, r.TextOf())
		}
		mustContain(t, r.TextOf(), fmt.Sprintf("No job %q in this session; its jobs are %s", id, bID))
	}
	if list := b.run("job_list", map[string]any{}).TextOf(); strings.Contains(list, id+" ") {
		t.Errorf("another session lists the job: %s", list)
	}
	if list := a.run("job_list", map[string]any{}).TextOf(); !strings.Contains(list, id+"  running for") {
		t.Errorf("job_list = %q", list)
	}
	if err := unixKill0(pgid); err != nil {
		t.Errorf("the job died when another session tried to kill it: %v", err)
	}

	// Ending the session kills its jobs.
	if err := a.sess.Close(); err != nil {
		t.Fatal(err)
	}
	groupGone(t, pgid)
	if r := a.run("bash", map[string]any{"command": "true", "run_in_background": true}); !r.IsError {
		t.Errorf("a closed session started a job: %s", r.TextOf())
	}
}

func TestUnknownJob(t *testing.T) {
	f := newFixture(t)
	r := f.run("job_output", map[string]any{"job_id": "job-0"})
	if !r.IsError || r.TextOf() != `No job "job-0": this session has no background jobs.` {
		t.Errorf("result = %+v", r)
	}
	if got := f.run("job_list", map[string]any{}).TextOf(); got != "This session has no background jobs." {
		t.Errorf("job_list = %q", got)
	}
}

func TestJobBufferIsBounded(t *testing.T) {
	f := newFixture(t)
	const size = 5 << 20
	id := f.startJob(fmt.Sprintf(`head -c %d /dev/zero | tr '\0' b; echo END`, size))
	out := f.jobOutput(id, 60_000)
	mustContain(t, out, id+": exited 0\n")
	mustContain(t, out, fmt.Sprintf("… %d bytes dropped", size+len("END\n")-jobBuffer))
	if !strings.HasSuffix(out, "bbbEND\n") {
		t.Errorf("output ends %q", out[len(out)-20:])
	}
	if len(out) > jobOutputHead+jobOutputTail+300 {
		t.Errorf("job_output returned %d bytes", len(out))
	}
	j, err := jobs(f.sess).get(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := cap(j.out.buf); n > jobBuffer {
		t.Errorf("job buffer holds %d bytes", n)
	}
}

func TestJobOutputWaitCancelled(t *testing.T) {
	f := newFixture(t)
	id := f.startJob("sleep 300")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := f.runCtx(ctx, "job_output", map[string]any{"job_id": id, "wait_ms": 600_000})
	if r.IsError || r.TextOf() != id+": running\n(no new output)" {
		t.Errorf("result = %+v", r)
	}
}

func TestJobCards(t *testing.T) {
	f := newFixture(t)
	id := f.startJob("echo done")
	calls := []struct {
		name string
		args map[string]any
	}{
		{"job_output", map[string]any{"job_id": id, "wait_ms": 60_000}},
		{"job_kill", map[string]any{"job_id": id}},
		{"job_list", map[string]any{}},
	}
	var all []byte
	for _, c := range calls {
		raw, _ := json.Marshal(c.args)
		r := res(f.reg.Run(context.Background(), f.env(), c.name, raw, nil))
		r.Content[0].Text = strings.ReplaceAll(r.Content[0].Text, id, "job-1")
		raw = []byte(strings.ReplaceAll(string(raw), id, "job-1"))
		all = append(all, cardsJSON(t, f.reg.PresentCall(c.name, raw, nil), f.reg.PresentResult(c.name, raw, r))...)
	}
	golden(t, "jobs.json", all)

	raw, _ := json.Marshal(map[string]any{"job_id": "nope"})
	r := res(f.reg.Run(context.Background(), f.env(), "job_output", raw, nil))
	if c := f.reg.PresentResult("job_output", raw, r); !r.IsError || c != nil {
		t.Errorf("an unknown job gives %+v and card %#v, want an error shown raw", r, c)
	}
}
