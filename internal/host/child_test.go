package host

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/hooks"
	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/view"
)

// ParallelTasks is a parent whose one message starts two subagents, each of
// which reads a file and answers; the tests of every consumer use it.
const parallelTasks = `{"turns": [
	{"tool_calls": [
		{"id": "t1", "name": "task", "args": {"description": "Read a", "prompt": "TASK-A: what does a.txt say?"}},
		{"id": "t2", "name": "task", "args": {"description": "Read b", "prompt": "TASK-B: what does b.txt say?"}}],
	 "input_tokens": 100, "output_tokens": 10},
	{"match": "TASK-A", "tool_calls": [{"id": "a1", "name": "read", "args": {"path": "a.txt"}}], "input_tokens": 20, "output_tokens": 2},
	{"match": "TASK-B", "tool_calls": [{"id": "b1", "name": "grep", "args": {"pattern": "beta"}}], "input_tokens": 30, "output_tokens": 3},
	{"match": "TASK-A", "text": "a.txt says alpha.", "input_tokens": 40, "output_tokens": 4},
	{"match": "TASK-B", "text": "b.txt says beta.", "input_tokens": 50, "output_tokens": 5},
	{"text": "Both read.", "input_tokens": 200, "output_tokens": 20}]}`

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// events keeps a subscriber's events.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) handle(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

// Two task calls of one message run two subagents at once (both start before
// either ends), each in a child session with its own log beside the parent's,
// whose header links the parent's call; each child's records reach the
// parent's stream nested under its call, in the child's log order; the
// parent model reads each child's final text as the task's result; the
// children's tokens count toward the parent's status, live and reloaded.
func TestParallelSubagents(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	p := scripted(t, parallelTasks)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	sub := s.Subscribe(ev.handle)
	if _, err := s.Prompt(t.Context(), "read both files"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	st := s.Status()
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Both tasks started before either's result: they ran at once.
	var order []string
	children := map[string][]session.Record{} // by parent call
	childID := map[string]string{}
	for _, e := range ev.all {
		switch {
		case e.Kind == KindCallStarted:
			order = append(order, "start "+e.CallID)
		case e.Kind == KindRecord && e.Record.Type == session.TypeToolResult:
			order = append(order, "result "+e.Record.CallID)
		case e.Kind == KindChild && e.Child.Event.Kind == KindRecord:
			children[e.Child.Call] = append(children[e.Child.Call], e.Child.Event.Record)
			childID[e.Child.Call] = e.Child.Session
			if e.Child.Agent != "explore" {
				t.Errorf("child agent %q, want explore", e.Child.Agent)
			}
		}
	}
	if len(order) == 4 {
		slices.Sort(order[:2]) // the two start at once, in either order
	}
	if want := []string{"start t1", "start t2", "result t1", "result t2"}; !slices.Equal(order, want) {
		t.Errorf("parent calls %q, want %q", order, want)
	}
	for call, want := range map[string]string{"t1": "a.txt says alpha.", "t2": "b.txt says beta."} {
		if got := resultText(t, path, call).TextOf(); got != want {
			t.Errorf("%s: the model read %q, want the child's final text %q", call, got, want)
		}
		id := childID[call]
		logged, err := session.ReadFile(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			t.Fatalf("%s: the child's log: %v", call, err)
		}
		h := logged[0]
		if h.Parent == nil || h.Parent.Session != filepath.Base(strings.TrimSuffix(path, ".jsonl")) || h.Parent.CallID != call || h.Parent.Agent != "explore" {
			t.Errorf("%s: child header's parent %+v", call, h.Parent)
		}
		live := children[call]
		var replayed []session.Record
		if err := ReplayChild(filepath.Dir(path), id, func(r session.Record) error { replayed = append(replayed, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if got, want := recordTypes(live), recordTypes(replayed); !slices.Equal(got, want) {
			t.Errorf("%s: the live stream nested %v, the child's log holds %v", call, got, want)
		}
	}
	// The task result card names the child session.
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pres := view.NewPresenter(s.Registry())
	for _, r := range recs {
		it := pres.Present(r)
		if r.Type == session.TypeToolResult {
			tr, ok := it.Result.(*card.TaskResult)
			if !ok || tr.Session != childID[r.CallID] || tr.Calls != 1 || tr.Agent != "explore" {
				t.Errorf("%s: result card %#v", r.CallID, it.Result)
			}
		}
	}

	// Tokens: the parent's 100+10+200+20 and the children's 20+2+40+4, 30+3+50+5.
	const in, out = 100 + 200 + 20 + 40 + 30 + 50, 10 + 20 + 2 + 4 + 3 + 5
	if st.InputTokens != in || st.OutputTokens != out {
		t.Errorf("live status %d in, %d out; want %d, %d (the children's included)", st.InputTokens, st.OutputTokens, in, out)
	}
	o := options(t, root, dir, p)
	re, err := Load(o, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = re.Close() }()
	if rs := re.Status(); rs.InputTokens != in || rs.OutputTokens != out {
		t.Errorf("reloaded status %d in, %d out; want %d, %d", rs.InputTokens, rs.OutputTokens, in, out)
	}
}

func recordTypes(rs []session.Record) []string {
	var out []string
	for _, r := range rs {
		if r.Type == session.TypeProgress || r.Type == session.TypeHeader {
			continue
		}
		out = append(out, string(r.Type)+" "+r.CallID)
	}
	return out
}

// A subagent's mode is its parent's: under a read-only parent, a custom agent
// that lists Write still cannot write (the call is refused, nobody is asked);
// under the default mode its write is asked about, the prompt titled with the
// agent's name, and a rejection leaves the file unwritten.
func TestSubagentCannotWidenTheMode(t *testing.T) {
	for _, mode := range []agent.Mode{agent.ModeReadOnly, agent.ModeDefault} {
		t.Run(string(mode), func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			writeFiles(t, root, map[string]string{".claude/agents/writer.md": "---\nname: writer\ndescription: Writes files.\ntools: Read, Write\n---\nWrite what you are told.\n"})
			p := scripted(t, `{"turns": [
				{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Write", "prompt": "TASK-W: write x.txt", "subagent_type": "writer"}}]},
				{"match": "TASK-W", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "x.txt", "content": "x\n"}}]},
				{"match": "TASK-W", "text": "Could not write."},
				{"text": "ok"}]}`)
			o := options(t, root, dir, p)
			o.Mode, o.Ask = mode, true
			o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
			s, err := Create(o)
			if err != nil {
				t.Fatal(err)
			}
			ans := &answerer{}
			var titles []string
			sub := s.Subscribe(func(e Event) {
				if e.Kind == KindPermission {
					if c, ok := e.Permission.Request.Card.(*card.DiffCall); ok {
						titles = append(titles, c.Title+" parent="+e.Permission.Parent)
					}
				}
				ans.handle(e)
			})
			var child string
			sub2 := s.Subscribe(func(e Event) {
				if e.Kind == KindChild {
					child = e.Child.Session
				}
			})
			if _, err := s.Prompt(t.Context(), "go"); err != nil {
				t.Fatal(err)
			}
			sub.Flush(drainWait)
			sub2.Flush(drainWait)
			sub.Close()
			sub2.Close()
			path := s.Path()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
				t.Fatal("the subagent wrote x.txt")
			}
			got := resultText(t, filepath.Join(filepath.Dir(path), child+".jsonl"), "w1")
			if mode == agent.ModeReadOnly {
				if len(ans.perms) != 0 || !strings.Contains(got.TextOf(), "read-only mode") {
					t.Errorf("asked %q; the write's result %q, want a read-only refusal", ans.perms, got.TextOf())
				}
			} else {
				if want := []string{"writer: Create x.txt parent=t1"}; !slices.Equal(titles, want) {
					t.Errorf("permission prompts %q, want %q", titles, want)
				}
				if !strings.Contains(got.TextOf(), "rejected") {
					t.Errorf("the write's result %q, want the rejection", got.TextOf())
				}
			}
		})
	}
}

// Cancelling the parent's turn cancels its subagents and kills their
// commands: a real sleep started by a subagent's bash is gone with its
// process group, and the task's result says it was cancelled.
func TestCancelKillsSubagentCommands(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{".dsh/agents/runner.md": "---\nname: runner\ndescription: Runs commands.\ntools: [Bash]\n---\n"})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Sleep", "prompt": "TASK-S: sleep", "subagent_type": "runner"}}]},
		{"match": "TASK-S", "tool_calls": [{"id": "s1", "name": "bash", "args": {"command": "cut -d' ' -f5 /proc/$$/stat > pgid; exec sleep 60"}}]},
		{"text": "ok"}]}`)
	o := options(t, root, dir, p)
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	started := make(chan struct{}, 1)
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindChild && e.Child.Event.Kind == KindCallStarted {
			started <- struct{}{}
		}
	})
	defer sub.Close()
	done := make(chan agent.StopReason, 1)
	go func() {
		stop, _ := s.Prompt(t.Context(), "sleep")
		done <- stop
	}()
	<-started
	var pgid int
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile(filepath.Join(root, "pgid"))
		if n, cerr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && cerr == nil {
			pgid = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the subagent's command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Cancel()
	if stop := <-done; stop != agent.StopCancelled {
		t.Errorf("the turn ended %s, want cancelled", stop)
	}
	proctest.GroupGone(t, pgid)
	if got := resultText(t, s.Path(), "t1"); !got.IsError || !strings.Contains(got.TextOf(), "ancelled") {
		t.Errorf("the task's result %+v, want cancelled", got)
	}
}

// /agents lists explore and the custom agents with what they are for, the
// tools they get here (a tool the session lacks left out) and their model —
// which an agent file of an untrusted project does not choose.
func TestAgentsCommand(t *testing.T) {
	for _, tt := range []struct {
		trusted bool
		model   string
	}{{true, "model: sonnet;"}, {false, "model: inherited;"}} {
		t.Run(fmt.Sprint("trusted=", tt.trusted), func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			writeFiles(t, root, map[string]string{".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep, NotebookEdit\nmodel: sonnet\n---\nReview.\n"})
			o := options(t, root, dir, scripted(t, `{"turns": [{"text": "ok"}]}`))
			o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
			for i := range o.AgentDirs {
				o.AgentDirs[i].Trusted = tt.trusted
			}
			s, err := Create(o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			r, err := s.Submit(t.Context(), Input{Text: "/agents", Where: Both})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"- explore (built in)", "- reviewer: Reviews diffs.", "tools: read, grep; " + tt.model, "reviewer.md"} {
				if !strings.Contains(r.Text, want) {
					t.Errorf("/agents does not say %q:\n%s", want, r.Text)
				}
			}
		})
	}
}

// "Always allow" answered to a subagent is the session's: the next
// subagent's write of the same kind is not asked about, and the parent's log
// holds the approval.
func TestSubagentAlwaysAllowIsTheSessions(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{".dsh/agents/writer.md": "---\nname: writer\ndescription: Writes files.\ntools: Write\n---\n"})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "x", "prompt": "TASK-X: write x.txt", "subagent_type": "writer"}}]},
		{"match": "TASK-X", "tool_calls": [{"id": "x1", "name": "write", "args": {"path": "x.txt", "content": "x\n"}}]},
		{"match": "TASK-X", "text": "Wrote x."},
		{"tool_calls": [{"id": "t2", "name": "task", "args": {"description": "y", "prompt": "TASK-Y: write y.txt", "subagent_type": "writer"}}]},
		{"match": "TASK-Y", "tool_calls": [{"id": "y1", "name": "write", "args": {"path": "y.txt", "content": "y\n"}}]},
		{"match": "TASK-Y", "text": "Wrote y."},
		{"text": "ok"}]}`)
	o := options(t, root, dir, p)
	o.Mode, o.Ask = agent.ModeDefault, true
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []string
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			mu.Lock()
			asked = append(asked, e.Permission.Request.CallID)
			mu.Unlock()
			e.Permission.Answer(agent.AllowAlways)
		}
	})
	if _, err := s.Prompt(t.Context(), "write both"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"x1"}) {
		t.Errorf("asked about %q, want x1 only", asked)
	}
	for _, f := range []string{"x.txt", "y.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	recs, err := session.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(recs, func(r session.Record) bool { return r.Type == session.TypeAllow && len(r.Keys) > 0 }) {
		t.Error("the parent's log holds no approval")
	}
}

// The session's hooks hold inside its subagents: a PreToolUse hook that
// blocks rm blocks a subagent's rm too (the file stays, the child's model
// reads why), and the hook's run is a record of the child's log, shown under
// the task.
func TestHooksHoldInSubagents(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	writeFiles(t, root, map[string]string{
		"victim.txt":              "keep me\n",
		".claude/agents/shell.md": "---\nname: shell\ndescription: Runs commands.\ntools: Bash\n---\nRun what you are told.\n",
	})
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"id": "t1", "name": "task", "args": {"description": "Clean", "prompt": "TASK-C: remove victim.txt", "subagent_type": "shell"}}]},
		{"match": "TASK-C", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "rm victim.txt"}}]},
		{"match": "TASK-C", "text": "Blocked."},
		{"text": "ok"}]}`)
	o := options(t, root, dir, p)
	o.Mode = agent.ModeBypass
	o.AgentDirs = agents.Dirs(root, func(string) string { return "" })
	o.Hooks = []hooks.Hook{{Event: hooks.PreToolUse, Matcher: "Bash",
		Command: `if grep -q '"rm '; then echo "rm is not allowed here" >&2; exit 2; fi`}}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	sub := s.Subscribe(ev.handle)
	if _, err := s.Prompt(t.Context(), "clean up"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(drainWait)
	sub.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "victim.txt")); err != nil || string(b) != "keep me\n" {
		t.Errorf("victim.txt: %q, %v; the hook should have kept it", b, err)
	}
	var nested *session.Hook
	var child string
	for _, e := range ev.all {
		if e.Kind == KindChild && e.Child.Event.Kind == KindRecord && e.Child.Event.Record.Hook != nil {
			nested, child = e.Child.Event.Record.Hook, e.Child.Session
		}
	}
	if nested == nil || nested.Decision != "deny" || nested.Call != "c1" {
		t.Fatalf("the hook under the task: %+v, want c1 denied", nested)
	}
	r := resultText(t, filepath.Join(dir, child+".jsonl"), "c1")
	if !r.IsError || !strings.Contains(r.TextOf(), "rm is not allowed here") {
		t.Errorf("the child's model read %q (error %v), want the hook's reason", r.TextOf(), r.IsError)
	}
}
