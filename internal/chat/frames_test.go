package chat

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// frameWidths are the terminal widths every scene is drawn at.
var frameWidths = []int{60, 100, 160}

// TestFrames draws the chat's scenes at each width against golden files
// (testdata/frames/SCENE-WIDTH.golden; -update rewrites them): what is printed
// above the chat, then the live view. The approvals come from a real host
// session (its call record, preview and permission request); the rest from
// the events a session sends.
func TestFrames(t *testing.T) {
	editWS, edit := approvalEvents(t, map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tname := \"world\"\n\tfmt.Println(\"hello\", name)\n}\n"},
		`{"name": "edit", "args": {"path": "main.go", "old_string": "\tfmt.Println(\"hello\", name)\n", "new_string": "\tif name == \"\" {\n\t\tname = \"you\"\n\t}\n\tfmt.Printf(\"hello, %s!\\n\", name)\n"}}`)
	cmdWS, command := approvalEvents(t, nil, `{"name": "bash", "args": {"command": "go test ./... && git status --short"}}`)
	scenes := []struct {
		name string
		draw func(h *harness)
	}{
		{"streamed", sceneStreamed},
		{"approval-edit", func(h *harness) { h.replay(editWS, edit) }},
		{"approval-command", func(h *harness) { h.replay(cmdWS, command) }},
		{"live-command", sceneLive},
		{"cancel", func(h *harness) {
			sceneLive(h)
			h.send(key('c', tea.ModCtrl))
			h.events(recordEvent(session.Record{Type: session.TypeToolResult, CallID: "c1",
				Result: &tool.Result{Content: []card.Content{{Type: "text", Text: "ok   pkg/a  0.1s\nok   pkg/b  0.3s\n--- FAIL: TestC"}}, IsError: true,
					Meta: []byte(`{"exitCode":null,"signal":"SIGKILL"}`)}}),
				recordEvent(session.Record{Type: session.TypeTurnEnd, StopReason: "cancelled"}))
			h.turnEnds(agent.StopCancelled, context.Canceled)
		}},
		{"palette", func(h *harness) { h.typeText("/") }},
		{"palette-filtered", func(h *harness) { h.typeText("/mo") }},
		{"model-picker", func(h *harness) {
			h.sess.models = []models.Info{
				{ID: "claude-opus-4-5", Name: "Claude Opus 4.5", ContextWindow: 200_000},
				{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", ContextWindow: 200_000},
				{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", ContextWindow: 200_000},
			}
			h.typeText("/model")
			h.send(key(tea.KeyEnter, 0))
			h.send(h.runLast()...)
		}},
		{"paste", func(h *harness) {
			var log strings.Builder
			for i := range 200 {
				fmt.Fprintf(&log, "2026-12-01T12:00:%02d build step %d ok\r\n", i%60, i)
			}
			h.typeText("why does the build log end like this? ")
			h.send(tea.PasteMsg{Content: log.String()})
			h.submitLogged()
		}},
		{"image", func(h *harness) {
			data := writePNG(h.t, filepath.Join(h.root, "screenshot.png"))
			h.send(tea.PasteMsg{Content: "'" + filepath.Join(h.root, "screenshot.png") + "'"})
			h.typeText("what is wrong with this dialog?")
			h.send(key(tea.KeyEnter, 0))
			h.settle()
			// The host attaches the image the text names (its tests say how).
			img := card.Image("image/png", base64.StdEncoding.EncodeToString(data))
			img.URI = "screenshot.png"
			h.events(recordEvent(session.Record{Type: session.TypeUser, Text: h.sess.texts[0], Content: []card.Content{img}}),
				host.Event{Kind: host.KindModelRequest})
			h.working()
		}},
		{"resumed", sceneResumed},
		{"subagents-running", func(h *harness) { h.subagents(t, true) }},
		{"subagents", func(h *harness) { h.subagents(t, false) }},
		{"subagents-expanded", func(h *harness) {
			h.subagents(t, false)
			h.send(key('o', tea.ModCtrl))
			h.settle()
		}},
	}
	for _, sc := range scenes {
		for _, w := range frameWidths {
			t.Run(fmt.Sprintf("%s-%d", sc.name, w), func(t *testing.T) {
				h := newHarness(t, w)
				sc.draw(h)
				h.frame(fmt.Sprintf("frames/%s-%d", sc.name, w))
			})
		}
	}
}

// approvalEvents runs one call of a scripted model on a real host session in
// a workspace holding files, and returns the workspace and the events up to
// and including the call's permission request (then refused).
func approvalEvents(t *testing.T, files map[string]string, call string) (string, []host.Event) {
	t.Helper()
	ws := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var turns string
	for name := range files { // the edit tool edits only files read first
		turns += `{"tool_calls": [{"name": "read", "args": {"path": "` + name + `"}}]}, `
	}
	p, err := script.Parse([]byte(`{"turns": [` + turns + `{"text": "Here is the change.", "tool_calls": [` + call + `]}, {"text": "Understood."}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: t.TempDir(), Root: ws, Mode: agent.ModeDefault, Ask: true,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan host.Event, 256)
	sub := s.Subscribe(func(e host.Event) { ch <- e })
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(context.Background(), "make the change"); done <- err }()
	var evs []host.Event
	for asked := false; !asked; {
		select {
		case e := <-ch:
			evs = append(evs, e)
			if e.Kind == host.KindPermission {
				e.Permission.Answer(agent.Reject)
				asked = true
			}
		case err := <-done:
			t.Fatalf("the turn ended (%v) without asking", err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return ws, evs
}

// replay shows a real session's events, as the chat gets them, in workspace ws.
// Deltas are left out (the records they make up follow) and so is the status,
// whose fake stays the same in every scene.
func (h *harness) replay(ws string, evs []host.Event) {
	h.root, h.m.cfg.Root = ws, ws
	h.m.sb.r.SetRoot(ws)
	h.working()
	for _, e := range evs {
		switch e.Kind {
		case host.KindStatus: // what the session does, not its paths and counts
			h.events(host.Event{Kind: host.KindStatus, Status: host.Status{State: e.Status.State,
				Model: h.m.status.Model, Mode: h.m.status.Mode, Window: h.m.status.Window}})
			continue
		case host.KindDelta, host.KindUsage, host.KindNotice:
			continue
		case host.KindRecord, host.KindModelRequest, host.KindCallStarted, host.KindPermission, host.KindQuestion, host.KindChild:
		}
		h.events(e)
	}
}

// submitLogged sends the input and then shows the user record the host logs
// for it: the text with its paste placeholders, and its pastes and files.
func (h *harness) submitLogged() {
	h.send(key(tea.KeyEnter, 0))
	h.settle()
	n := len(h.sess.texts)
	if n == 0 {
		h.t.Fatalf("nothing was sent; printed:\n%s", h.printed.String())
	}
	h.events(recordEvent(session.Record{Type: session.TypeUser, Text: h.sess.texts[n-1], Content: h.sess.parts[n-1]}),
		host.Event{Kind: host.KindModelRequest})
	h.working() // the fake's turn ended at once; a real one is still on
}

func sceneStreamed(h *harness) {
	h.typeText("hi")
	h.send(key(tea.KeyEnter, 0))
	h.working()
	h.events(recordEvent(session.Record{Type: session.TypeUser, Text: "hi"}),
		host.Event{Kind: host.KindModelRequest},
		host.Event{Kind: host.KindDelta, Delta: provider.Delta{Type: provider.DeltaThinking, Text: "The user says hi."}},
		host.Event{Kind: host.KindDelta, Delta: provider.Delta{Type: provider.DeltaText, Text: "Hello! Here is **bold** text and a list:\n\n- one\n- tw"}},
		recordEvent(session.Record{Type: session.TypeThinking, Text: "The user says hi."}),
		recordEvent(session.Record{Type: session.TypeAssistant, Text: "Hello! Here is **bold** text, `code`, and a list:\n\n- one\n- two\n\n```go\nfunc main() { fmt.Println(\"hi\") }\n```"}),
		host.Event{Kind: host.KindStatus, Status: host.Status{Model: "claude-sonnet-4-5", Mode: agent.ModeDefault, Window: 200_000, InputTokens: 1200, OutputTokens: 30, ContextTokens: 24_000}},
		recordEvent(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 1200, OutputTokens: 30, ContextTokens: 24_000}}))
	h.turnEnds(agent.StopEndTurn, nil)
}

func sceneLive(h *harness) {
	h.typeText("run the tests")
	h.send(key(tea.KeyEnter, 0))
	h.working()
	h.events(recordEvent(session.Record{Type: session.TypeUser, Text: "run the tests"}),
		recordEvent(session.Record{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: []byte(`{"command":"go test ./..."}`)}),
		host.Event{Kind: host.KindCallStarted, CallID: "c1"},
		recordEvent(session.Record{Type: session.TypeProgress, CallID: "c1", Chunk: "ok   pkg/a  0.1s\nok   pkg/b  0.3s\n=== RUN   TestC\n--- FAIL: TestC (0.00s)\n    c_test.go:12: got 2, want 3\n"}))
}

// sceneResumed reopens a session whose log holds a turn with a command.
func sceneResumed(h *harness) {
	reg := toolset.New(toolset.Options{})
	recs := []session.Record{
		{Type: session.TypeUser, Text: "how many Go files are there?"},
		{Type: session.TypeAssistant, Text: "Let me count them."},
		{Type: session.TypeToolCall, CallID: "c1", Name: "bash", Args: []byte(`{"command":"ls *.go | wc -l"}`)},
		{Type: session.TypeToolResult, CallID: "c1", Result: &tool.Result{Content: []card.Content{{Type: "text", Text: "12\n"}}, Meta: []byte(`{"exitCode":0}`)}},
		{Type: session.TypeAssistant, Text: "There are **12** Go files."},
		{Type: session.TypeTurnEnd, StopReason: "end_turn"},
	}
	h.m.cfg.Open = func(_ string, replay Replay) (Opened, error) {
		for _, r := range recs {
			replay(reg, r)
		}
		return Opened{Session: &fakeSession{id: "20261201-110000-resumedd", status: h.sess.status}, Registry: reg}, nil
	}
	h.typeText("/resume 20261201-110000-resumedd")
	h.send(key(tea.KeyEnter, 0))
	h.settle()
}

// parallelTasks is a parent whose one message starts two subagents, each of
// which reads a file and answers.
const parallelTasks = `{"turns": [
	{"tool_calls": [
		{"id": "t1", "name": "task", "args": {"description": "Read a", "prompt": "TASK-A: what does a.txt say?"}},
		{"id": "t2", "name": "task", "args": {"description": "Read b", "prompt": "TASK-B: what does b.txt say?"}}],
	 "input_tokens": 100, "output_tokens": 10},
	{"match": "TASK-A", "tool_calls": [{"id": "a1", "name": "read", "args": {"path": "a.txt"}}], "input_tokens": 20, "output_tokens": 2},
	{"match": "TASK-B", "tool_calls": [{"id": "b1", "name": "grep", "args": {"pattern": "beta", "path": "b.txt"}}], "input_tokens": 30, "output_tokens": 3},
	{"match": "TASK-A", "text": "a.txt says alpha.", "input_tokens": 40, "output_tokens": 4},
	{"match": "TASK-B", "text": "b.txt says beta.", "input_tokens": 50, "output_tokens": 5},
	{"text": "Both read.", "input_tokens": 200, "output_tokens": 20}]}`

// subagents shows a real session's turn with two subagents running at once:
// their events in a fixed order (each child's own order kept; the machine
// interleaves them), up to the first child call running when running is set.
func (h *harness) subagents(t *testing.T, running bool) {
	ws, dir := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := script.Parse([]byte(parallelTasks))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Create(host.Options{SessionDir: dir, Root: ws, Mode: agent.ModeBypass,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var evs []host.Event
	sub := s.Subscribe(func(e host.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
	if _, err := s.Prompt(context.Background(), "read both files"); err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	sub.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The subagents run at once, so their events interleave with each other
	// and with the parent's results as the scheduler pleases: each task's
	// events go together, in the order of the tasks, before the first result
	// (the status, which the scenes leave out, and the streamed text go).
	evs = slices.DeleteFunc(evs, func(e host.Event) bool {
		return e.Kind == host.KindUsage || e.Kind == host.KindDelta
	})
	var child, rest []host.Event
	for _, e := range evs {
		if e.Kind == host.KindChild {
			child = append(child, e)
		} else {
			rest = append(rest, e)
		}
	}
	slices.SortStableFunc(child, func(a, b host.Event) int { return strings.Compare(a.Child.Call, b.Child.Call) })
	at := slices.IndexFunc(rest, func(e host.Event) bool {
		return e.Kind == host.KindRecord && e.Record.Type == session.TypeToolResult
	})
	if at < 0 {
		at = len(rest)
	}
	evs = slices.Concat(rest[:at], child, rest[at:])
	if running {
		for i, e := range evs {
			if e.Kind == host.KindChild && e.Child.Event.Kind == host.KindCallStarted {
				evs = evs[:i+1]
				break
			}
		}
	}
	h.m.sb.childDir(dir)
	h.typeText("read both files")
	h.send(key(tea.KeyEnter, 0))
	h.replay(ws, evs)
	if !running {
		h.turnEnds(agent.StopEndTurn, nil)
	}
}
