package acp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"golang.org/x/sys/unix"

	"github.com/dsh-dev/dsh/internal/session"
)

// racerEnv makes the test binary a racer (see init): it swaps the pairs of
// names it is given (NAME|NAME|NAME|NAME…) until it is killed, as the model's
// background job would.
const racerEnv = "DSH_ACP_TEST_RACER"

func init() {
	if spec := os.Getenv(racerEnv); spec != "" {
		names := strings.Split(spec, "|")
		for {
			for i := 0; i+1 < len(names); i += 2 {
				_ = unix.Renameat2(unix.AT_FDCWD, names[i], unix.AT_FDCWD, names[i+1], unix.RENAME_EXCHANGE)
			}
		}
	}
}

// secretKey is what the files outside the workspace hold.
const secretKey = "-----BEGIN OPENSSH PRIVATE KEY----- the racer's prize"

// raceTree is a workspace whose folder race/ and file notes.txt each have a
// sibling link to outside it (racelink to a folder holding a notes.txt with
// the secret, notelink to the secret): exchanging each with its link makes
// race/notes.txt and notes.txt read the secret, and race/NEW land outside.
type raceTree struct {
	cwd, out string
	pairs    [][2]string // what the racer exchanges
}

func newRaceTree(t *testing.T) raceTree {
	t.Helper()
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{
		filepath.Join(cwd, "race/notes.txt"):       "workspace notes\n",
		filepath.Join(cwd, "notes.txt"):            "workspace notes\n",
		filepath.Join(out, "secretdir/notes.txt"):  secretKey + "\n",
		filepath.Join(out, "id_rsa"):               secretKey + "\n",
		filepath.Join(out, "secretdir/.gitignore"): "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(out, "secretdir"), filepath.Join(cwd, "racelink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "id_rsa"), filepath.Join(cwd, "notelink")); err != nil {
		t.Fatal(err)
	}
	return raceTree{cwd: cwd, out: out, pairs: [][2]string{
		{filepath.Join(cwd, "race"), filepath.Join(cwd, "racelink")},
		{filepath.Join(cwd, "notes.txt"), filepath.Join(cwd, "notelink")},
	}}
}

// untouched fails the test if anything outside the workspace was written:
// the secret files are as they were and nothing was added beside them.
func (r raceTree) untouched(t *testing.T) {
	t.Helper()
	for _, p := range []string{filepath.Join(r.out, "secretdir/notes.txt"), filepath.Join(r.out, "id_rsa")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != secretKey+"\n" {
			t.Errorf("%s outside the workspace was written: %q, %v", p, b, err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(r.out, "secretdir"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".gitignore", "notes.txt"}) {
		t.Errorf("files were written outside the workspace: %s holds %v", filepath.Join(r.out, "secretdir"), names)
	}
}

// leaked fails the test if dsh sent the secret to its client (every tool
// result goes out as an update).
func leaked(t *testing.T, c *client) {
	t.Helper()
	n := 0
	for _, l := range c.out.all() {
		if strings.Contains(l, "the racer's prize") {
			n++
		}
	}
	if n > 0 {
		t.Errorf("%d messages to the client hold the secret read from outside the workspace", n)
	}
}

// raceTurns are calls on the raced paths: reads of both, a new file in the
// raced folder, then a write of the raced file; sfx makes their ids unique.
func raceTurns(sfx string) []turn {
	return []turn{
		{ToolCalls: []call{
			{ID: "r" + sfx, Name: "read", Args: map[string]any{"path": "race/notes.txt"}},
			{ID: "n" + sfx, Name: "read", Args: map[string]any{"path": "notes.txt"}},
			{ID: "w" + sfx, Name: "write", Args: map[string]any{"path": "race/new" + sfx + ".txt", "content": "new\n"}},
		}},
		{ToolCalls: []call{{ID: "e" + sfx, Name: "write", Args: map[string]any{"path": "notes.txt", "content": "rewritten\n"}}}},
		{Text: "Done."},
	}
}

// racer exchanges the tree's pairs without pause until stopped; halt stops
// it and says how many rounds it made.
func racer(t *testing.T, tree raceTree) (halt func() int64) {
	var swaps atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, p := range tree.pairs {
				if err := unix.Renameat2(unix.AT_FDCWD, p[0], unix.AT_FDCWD, p[1], unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("exchanging %s: %v", p[0], err)
					return
				}
			}
			swaps.Add(1)
			runtime.Gosched()
		}
	})
	once := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	t.Cleanup(once)
	return func() int64 {
		once()
		return swaps.Load()
	}
}

// results are the session's tool results by call id.
func results(t *testing.T, c *client, id sdk.SessionId) map[string]session.Record {
	t.Helper()
	out := map[string]session.Record{}
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeToolResult {
			out[r.CallID] = r
		}
	}
	return out
}

// TestEditorFilesRaced races the editor's files as the attacker did:
// a process outside dsh exchanges (renameat2) the folder race/ and the file
// notes.txt with links to a secret outside the workspace, without pause,
// while sessions read and write them through an editor that opens every path
// it is given by name, following links, as a real one does. Each session is
// new, so each starts trusting the editor again. No read gives the secret to
// dsh's client and no write lands outside: a path whose folder or file was
// just moved is not lent to the editor. Every call is counted, none timed.
func TestEditorFilesRaced(t *testing.T) {
	const sessions = 60
	tree := newRaceTree(t)
	ed := &editor{buffers: map[string]string{}}
	c := start(t, options{cwd: tree.cwd, editor: ed, script: script(t, raceTurns("")...)}) // each session plays it from its start
	halt := racer(t, tree)

	newOut, keyOut := filepath.Join(tree.out, "secretdir/new.txt"), filepath.Join(tree.out, "id_rsa")
	var errs, ok, landed int
	for range sessions {
		id := c.newSession()
		c.mustPrompt(id, "Go.", sdk.StopReasonEndTurn)
		res := results(t, c, id)
		for _, r := range res {
			if r.Result.IsError {
				errs++
			} else {
				ok++
			}
		}
		// What landed outside names its call (the sessions run one at a
		// time), which must have failed saying so.
		var outside []string
		if _, err := os.Lstat(newOut); err == nil {
			outside = append(outside, "w")
		}
		if b, err := os.ReadFile(keyOut); err != nil || string(b) != secretKey+"\n" {
			outside = append(outside, "e")
		}
		for _, k := range outside {
			landed++
			t.Errorf("session %s: call %s wrote outside the workspace (it reported %q)", id, k, res[k].Result.TextOf())
		}
		// The next session starts as this one did.
		for _, p := range []string{newOut, filepath.Join(tree.cwd, "race/new.txt"), filepath.Join(tree.cwd, "racelink/new.txt")} {
			_ = os.Remove(p)
		}
		if err := os.WriteFile(keyOut, []byte(secretKey+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		clear(ed.buffers)
		c.mu.Unlock()
	}
	swaps := halt()
	leaked(t, c)
	if b, err := os.ReadFile(filepath.Join(tree.out, "secretdir/notes.txt")); err != nil || string(b) != secretKey+"\n" {
		t.Errorf("secretdir/notes.txt was written: %q, %v", b, err)
	}
	c.mu.Lock()
	reads, writes := len(ed.reads), len(ed.writes)
	c.mu.Unlock()
	t.Logf("%d rounds of swaps; %d calls succeeded, %d failed; the editor was asked %d reads, %d writes; %d writes landed outside",
		swaps, ok, errs, reads, writes, landed)
	if swaps == 0 {
		t.Fatal("the racer never swapped")
	}
}

// TestEditorFilesRacedAtTheOpen times the swap on the worst moment, which a
// racer can only hope for: after dsh's last check, as the editor opens the
// path (and back once it has). A read the editor made then is refused, so
// the secret it read never reaches the client. A write the editor made then
// cannot be kept from following the link — the editor is another program —
// but it is a failed call that says the change may be elsewhere, never a
// success. Either way the session then stops lending paths: its next calls
// are the disk's and see the workspace.
func TestEditorFilesRacedAtTheOpen(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  call // raced through the editor
		reason string
	}{
		{"read in a swapped folder", call{ID: "first", Name: "read", Args: map[string]any{"path": "race/notes.txt"}}, "its text is not used"},
		{"read of a swapped file", call{ID: "first", Name: "read", Args: map[string]any{"path": "notes.txt"}}, "its text is not used"},
		{"write in a swapped folder", call{ID: "first", Name: "write", Args: map[string]any{"path": "race/new.txt", "content": "new\n"}},
			"may have written the change elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := newRaceTree(t)
			swap := func() {
				for _, p := range tree.pairs {
					if err := unix.Renameat2(unix.AT_FDCWD, p[0], unix.AT_FDCWD, p[1], unix.RENAME_EXCHANGE); err != nil {
						t.Error(err)
					}
				}
			}
			ed := &editor{buffers: map[string]string{}, around: func(string) func() {
				swap()
				return swap
			}}
			c := start(t, options{cwd: tree.cwd, editor: ed, script: script(t,
				turn{ToolCalls: []call{tc.first}},
				turn{ToolCalls: []call{{ID: "after", Name: "read", Args: map[string]any{"path": "race/notes.txt"}},
					{ID: "afterFile", Name: "read", Args: map[string]any{"path": "notes.txt"}}}},
				turn{ToolCalls: []call{{ID: "write", Name: "write", Args: map[string]any{"path": "race/other.txt", "content": "other\n"}}}},
				turn{Text: "Done."})})
			id := c.newSession()
			c.mustPrompt(id, "Go.", sdk.StopReasonEndTurn)
			res := results(t, c, id)
			if r := res["first"]; !r.Result.IsError || !strings.Contains(r.Result.TextOf(), tc.reason) {
				t.Errorf("the raced call reported %q, want an error saying %q", r.Result.TextOf(), tc.reason)
			}
			for _, k := range []string{"after", "afterFile", "write"} {
				if r := res[k]; r.Result.IsError || strings.Contains(string(r.Result.Meta), `"editor":true`) {
					t.Errorf("%s after the race: %s %s", k, r.Result.TextOf(), r.Result.Meta)
				}
			}
			if b, err := os.ReadFile(filepath.Join(tree.cwd, "race/other.txt")); err != nil || string(b) != "other\n" {
				t.Errorf("the write after the race: %q, %v", b, err)
			}
			leaked(t, c)
			c.mu.Lock()
			defer c.mu.Unlock()
			if n := len(ed.reads) + len(ed.writes); n != 1 {
				t.Errorf("the editor was asked %d times, want once (the raced call): %v", n, ed.reads)
			}
		})
	}
}

// TestEditorFilesWhileJobsRun: the attacker was the model's own
// background job. While one runs (here exchanging race/ and notes.txt with
// links out, without pause), every read and write of the session is the
// disk's: the editor is never given a path, no read gives the secret, no
// write lands outside. Once the job is killed the editor is used again, which
// also shows that no path was lent while the job ran (a lent path that
// changed would have ended the lending for the session).
func TestEditorFilesWhileJobsRun(t *testing.T) {
	const rounds = 10
	tree := newRaceTree(t)
	if err := os.WriteFile(filepath.Join(tree.cwd, "plain.txt"), []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range tree.pairs {
		names = append(names, p[0], p[1])
	}
	job := fmt.Sprintf("%s='%s' exec '%s'", racerEnv, strings.Join(names, "|"), bin)
	turns := []turn{
		{ToolCalls: []call{{ID: "job", Name: "bash", Args: map[string]any{"command": job, "run_in_background": true}}}},
		{Text: "Started."},
	}
	for i := range rounds {
		turns = append(turns, raceTurns(fmt.Sprint(i))...)
	}
	turns = append(turns,
		turn{ToolCalls: []call{{ID: "kill", Name: "job_kill", Args: map[string]any{"job_id": "job-1"}}}},
		turn{ToolCalls: []call{{ID: "after", Name: "read", Args: map[string]any{"path": "plain.txt"}}}},
		turn{Text: "Done."})
	ed := &editor{buffers: map[string]string{}}
	c := start(t, options{cwd: tree.cwd, editor: ed, script: script(t, turns...)})
	id := c.newSession()
	c.mustPrompt(id, "Start the job.", sdk.StopReasonEndTurn)
	// The job is racing once race/ has been a link.
	for deadline := time.Now().Add(time.Minute); ; runtime.Gosched() {
		if fi, err := os.Lstat(filepath.Join(tree.cwd, "race")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the racing job never swapped race/: %v", results(t, c, id)["job"].Result.TextOf())
		}
	}
	for range rounds {
		c.mustPrompt(id, "Go.", sdk.StopReasonEndTurn)
	}
	c.mu.Lock()
	reads, writes := len(ed.reads), len(ed.writes)
	c.mu.Unlock()
	if reads+writes != 0 {
		t.Errorf("while the job ran the editor was asked %d reads, %d writes: %v", reads, writes, ed.reads)
	}
	c.mustPrompt(id, "Kill it, read again.", sdk.StopReasonEndTurn)
	tree.untouched(t)
	leaked(t, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(ed.reads, []string{filepath.Join(tree.cwd, "plain.txt")}) {
		t.Errorf("after the job the editor was asked %v, want plain.txt", ed.reads)
	}
}

// TestEditorFilesAutoMode: in auto mode the model's commands run unasked, so
// any of them could race the editor: the files are the disk's.
func TestEditorFilesAutoMode(t *testing.T) {
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "plain.txt"), []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed := &editor{buffers: map[string]string{}}
	c := start(t, options{cwd: cwd, editor: ed, mode: "auto", args: []string{"--sandbox", "on"}, script: script(t,
		turn{ToolCalls: []call{{ID: "r", Name: "read", Args: map[string]any{"path": "plain.txt"}}}},
		turn{ToolCalls: []call{{ID: "w", Name: "write", Args: map[string]any{"path": "new.txt", "content": "new\n"}}}},
		turn{Text: "Done."})})
	id := c.newSession()
	c.mustPrompt(id, "Go.", sdk.StopReasonEndTurn)
	for k, r := range results(t, c, id) {
		if r.Result.IsError {
			t.Errorf("%s failed: %s", k, r.Result.TextOf())
		}
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "new.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(ed.reads)+len(ed.writes) != 0 {
		t.Errorf("in auto mode the editor was asked %v and %d writes", ed.reads, len(ed.writes))
	}
}
