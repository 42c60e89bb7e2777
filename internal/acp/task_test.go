package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestSubagents: two task calls of one message run two subagents; each
// subagent's calls reach the client as ordinary tool calls, their ids the
// task's and the child's joined, linked by _meta.dsh.parentToolCallId; the
// task's final update sums them up and names the child session. Loaded, the
// session sends the same nested calls, read from the children's logs.
func TestSubagents(t *testing.T) {
	dir := t.TempDir()
	cwd := t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, options{cwd: cwd, sessionDir: dir, script: script(t,
		turn{ToolCalls: []call{
			{ID: "t1", Name: "task", Args: map[string]any{"description": "Read a", "prompt": "TASK-A: what does a.txt say?"}},
			{ID: "t2", Name: "task", Args: map[string]any{"description": "Read b", "prompt": "TASK-B: what does b.txt say?"}}}},
		turn{Match: "TASK-A", ToolCalls: []call{{ID: "a1", Name: "read", Args: map[string]any{"path": "a.txt"}}}},
		turn{Match: "TASK-B", ToolCalls: []call{{ID: "b1", Name: "grep", Args: map[string]any{"pattern": "beta"}}}},
		turn{Match: "TASK-A", Text: "a.txt says alpha."},
		turn{Match: "TASK-B", Text: "b.txt says beta."},
		turn{Text: "Both read."})})
	id := c.newSession()
	c.mustPrompt(id, "Read both files.", sdk.StopReasonEndTurn)
	var children []sdk.SessionId
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeToolResult {
			var m struct{ Session string }
			if err := json.Unmarshal(r.Result.Meta, &m); err != nil || m.Session == "" {
				t.Fatalf("%s: no child session in %s", r.CallID, r.Result.Meta)
			}
			children = append(children, sdk.SessionId(m.Session))
		}
	}
	sessions := append([]sdk.SessionId{id}, children...)
	live := byParent(c.transcript(0, sessions...))
	golden(t, "task", live)
	if l, err := c.conn.ListSessions(c.ctx(), sdk.ListSessionsRequest{}); err != nil || len(l.Sessions) != 1 || l.Sessions[0].SessionId != id {
		t.Errorf("session/list: %+v, %v; want the parent only (its subagents' sessions are under its tasks)", l.Sessions, err)
	}

	var nested []string
	c.mu.Lock()
	updates := c.updates
	c.mu.Unlock()
	for _, u := range updates {
		if tc := u.Update.ToolCall; tc != nil {
			if d, ok := tc.Meta["dsh"].(map[string]any); ok {
				nested = append(nested, string(tc.ToolCallId)+" under "+d["parentToolCallId"].(string))
			}
		}
	}
	slices.Sort(nested)
	if want := []string{"t1/a1 under t1", "t2/b1 under t2"}; !slices.Equal(nested, want) {
		t.Errorf("nested calls %q, want %q", nested, want)
	}
	c.close()

	again := start(t, options{cwd: cwd, sessionDir: dir, script: script(t, turn{Text: "ok"})})
	from := again.mark()
	if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	loaded := byParent(again.transcript(from, sessions...))
	golden(t, "task-load", loaded)
	if lf, rf := fold(t, live), fold(t, loaded); !reflect.DeepEqual(lf["calls"], rf["calls"]) {
		t.Errorf("the reloaded cards differ from the live ones:\nlive:   %v\nloaded: %v", lf["calls"], rf["calls"])
	}
}

// byParent orders each run of nested updates by the task they belong to,
// keeping their order within it: subagents running at once interleave as
// the machine schedules them.
func byParent(ls []string) []string {
	parent := func(l string) string {
		var m struct {
			Params struct {
				Update struct {
					Meta struct {
						Dsh struct {
							Parent string `json:"parentToolCallId"`
						} `json:"dsh"`
					} `json:"_meta"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			return ""
		}
		return m.Params.Update.Meta.Dsh.Parent
	}
	for i := 0; i < len(ls); {
		j := i
		for j < len(ls) && parent(ls[j]) != "" {
			j++
		}
		if j > i {
			slices.SortStableFunc(ls[i:j], func(a, b string) int { return strings.Compare(parent(a), parent(b)) })
			i = j
		} else {
			i++
		}
	}
	return ls
}

// TestSubagentPermission: a subagent's call that needs asking is asked about
// over ACP as a nested call — its id the task's and its own, the link in
// _meta, the title naming the agent — and a rejection leaves the file alone.
func TestSubagentPermission(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".claude", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "writer.md"), []byte("---\nname: writer\ndescription: Writes files.\ntools: Read, Write\n---\nWrite what you are told.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{cwd: cwd, mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "t1", Name: "task", Args: map[string]any{"description": "Write x", "prompt": "TASK-W: write x.txt", "subagent_type": "writer"}}}},
		turn{Match: "TASK-W", ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "x.txt", "content": "x\n"}}}},
		turn{Match: "TASK-W", Text: "It was rejected."},
		turn{Text: "ok"})})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("reject_once")}
	}
	id := c.newSession()
	c.mustPrompt(id, "Write x.", sdk.StopReasonEndTurn)
	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once", len(asked))
	}
	tc := asked[0].ToolCall
	d, _ := tc.Meta["dsh"].(map[string]any)
	if tc.ToolCallId != "t1/w1" || title(tc.Title) != "writer: Create x.txt" || d["parentToolCallId"] != "t1" {
		t.Errorf("asked about %s %q (meta %v), want t1/w1 \"writer: Create x.txt\" under t1", tc.ToolCallId, title(tc.Title), tc.Meta)
	}
	if _, err := os.Stat(filepath.Join(cwd, "x.txt")); err == nil {
		t.Error("the rejected write ran")
	}
}
