package bash

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture is a session on a fresh workspace with the bash tools.
type fixture struct {
	t     *testing.T
	root  string
	sess  *tool.Session
	reg   *tool.Registry
	mu    sync.Mutex
	emits []string
}

func newFixture(t *testing.T, opts ...Options) *fixture {
	t.Helper()
	return fixtureAt(t, t.TempDir(), opts...)
}

// fixtureAt is newFixture with its workspace at root.
func fixtureAt(t *testing.T, root string, opts ...Options) *fixture {
	t.Helper()
	ws, err := workspace.New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: ws.Root(), sess: tool.NewSession(t.Name(), ws), reg: tool.NewRegistry(Tools(opts...)...)}
	t.Cleanup(func() { _ = f.sess.Close() })
	return f
}

func (f *fixture) env() tool.Env {
	return tool.Env{Session: f.sess, Progress: func(s string) {
		f.mu.Lock()
		f.emits = append(f.emits, s)
		f.mu.Unlock()
	}}
}

func (f *fixture) run(name string, args any) tool.Result {
	return f.runCtx(context.Background(), name, args)
}

func (f *fixture) runCtx(ctx context.Context, name string, args any) tool.Result {
	f.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	return res(f.reg.Run(ctx, f.env(), name, raw, nil))
}

func (f *fixture) bash(command string) tool.Result {
	f.t.Helper()
	return f.run("bash", map[string]any{"command": command})
}

func (f *fixture) terminal(command string, r tool.Result) *card.TerminalResult {
	f.t.Helper()
	if command == "" {
		command = "x" // the card does not depend on it
	}
	raw, _ := json.Marshal(map[string]any{"command": command})
	c, ok := f.reg.PresentResult("bash", raw, r).(*card.TerminalResult)
	if !ok {
		f.t.Fatalf("result of %q has no terminal card: %+v", command, r)
	}
	return c
}

func metaOf(t *testing.T, r tool.Result) meta {
	t.Helper()
	var m meta
	if err := json.Unmarshal(r.Meta, &m); err != nil {
		t.Fatalf("meta %s: %v", r.Meta, err)
	}
	return m
}

func groupGone(t *testing.T, pgid int) { t.Helper(); proctest.GroupGone(t, pgid) }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// cardsJSON renders a call card and a result card as indented JSON for a golden file.
func cardsJSON(t *testing.T, call card.Call, result card.Result) []byte {
	t.Helper()
	c, err := json.Marshal(call)
	if err != nil {
		t.Fatal(err)
	}
	r := []byte("null")
	if result != nil {
		if r, err = json.Marshal(result); err != nil {
			t.Fatal(err)
		}
	}
	v := jsontext.Value(`{"call":` + string(c) + `,"result":` + string(r) + `}`)
	if err := v.Indent(); err != nil {
		t.Fatal(err)
	}
	return append(v, '\n')
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// peek reads a job's buffered output without moving its cursor.
func peek(f *fixture, id string) string {
	j, err := jobs(f.sess).get(id)
	if err != nil {
		f.t.Fatal(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	data, _ := j.out.since(j.cursor)
	return string(data)
}

// waitFor polls cond: a job's progress is only observable from outside.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func unixKill0(pgid int) error { return unix.Kill(-pgid, 0) }
