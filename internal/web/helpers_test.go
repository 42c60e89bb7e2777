package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
	"github.com/dsh-dev/dsh/internal/workspace"
)

const testToken = "test-token-0123456789abcdef"

// recorder drives the real tools and writes what they do to a session log, the
// way the agent loop does: a call record, its progress, its plan, its result.
type recorder struct {
	t     testing.TB
	reg   *tool.Registry
	log   *session.Log
	tools *tool.Session
	root  string
	n     int
	mu    sync.Mutex // Progress may be called from the tool's goroutines
}

func newRecorder(t testing.TB, sessDir, id string) *recorder {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	log, err := session.Create(sessDir, id, ws.Root(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tools := tool.NewSession(id, ws)
	t.Cleanup(func() {
		tools.Close()
		log.Close()
	})
	return &recorder{t: t, reg: toolset.New(toolset.Options{}), log: log, tools: tools, root: ws.Root()}
}

func (r *recorder) append(rec session.Record) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.log.Append(rec); err != nil {
		r.t.Fatal(err)
	}
}

func (r *recorder) say(typ session.RecordType, text string) {
	r.t.Helper()
	r.append(session.Record{Type: typ, Text: text})
}

// file writes a file into the workspace behind the tools' back.
func (r *recorder) file(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.root, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// call runs a tool for real and logs it; it returns the call id and the result.
func (r *recorder) call(name string, args any) (string, tool.Result) {
	r.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		r.t.Fatal(err)
	}
	r.n++
	id := fmt.Sprintf("call_%04d", r.n)
	env := tool.Env{
		Session:  r.tools,
		Progress: func(c string) { r.append(session.Record{Type: session.TypeProgress, CallID: id, Chunk: c}) },
		Plan:     func(p []tool.PlanEntry) { r.append(session.Record{Type: session.TypePlan, Plan: p}) },
	}
	// As the agent does: the preview before the call is logged, the result
	// folded into the session's tool state.
	var preview jsontext.Value
	var fail *tool.Result
	if tl, ok := r.reg.Get(name); ok {
		preview, fail = tl.Preview(context.Background(), env, raw)
	}
	r.append(session.Record{Type: session.TypeToolCall, CallID: id, Name: name, Args: raw, Preview: preview})
	var out tool.Result
	if fail != nil {
		out = *fail
	} else {
		out = res(r.reg.Run(context.Background(), env, name, raw, preview))
	}
	r.append(session.Record{Type: session.TypeToolResult, CallID: id, Result: &out})
	r.reg.Fold(r.tools, name, raw, out)
	return id, out
}

// everyCard records a session that shows every card kind, a todo list and messages,
// using the real tools on real files.
func everyCard(r *recorder) {
	r.t.Helper()
	r.say(session.TypeUser, "Fix the **greeting** and add a changelog.")
	r.say(session.TypeThinking, "Read first, then edit.")
	r.say(session.TypeAssistant, "Planning:\n\n- read\n- edit\n- `run` it")
	r.call("todo_write", map[string]any{"todos": []map[string]any{
		{"content": "Fix the greeting", "status": "in_progress", "priority": "high"},
		{"content": "Add a changelog", "status": "pending"},
	}})
	var long strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&long, "    print(%d)  # line %d\n", i, i)
	}
	r.file("greet.py", "def greet(name):\n    return \"Hello \" + name\n\n\ndef main():\n"+long.String())
	r.call("read", map[string]any{"path": "greet.py"})
	r.call("edit", map[string]any{"path": "greet.py", "old_string": `    return "Hello " + name`, "new_string": `    return f"Hello, {name}!"`})
	r.call("write", map[string]any{"path": "CHANGELOG.md", "content": "# Changelog\n\n- Fix the greeting.\n"})
	r.call("bash", map[string]any{"command": "seq 1 100", "description": "count"})
	r.call("bash", map[string]any{"command": "echo oops >&2; exit 3"})
	r.call("job_list", map[string]any{})
	r.call("read", map[string]any{"path": "missing.txt"})
	r.say(session.TypeAssistant, "Done: the greeting is fixed.")
	r.append(session.Record{Type: session.TypeTurnEnd, StopReason: "end_turn", Usage: &session.Usage{InputTokens: 1200, OutputTokens: 80}})
}

// testServer serves dir with the test token.
func testServer(t testing.TB, dir string) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Dir: dir, Token: testToken, Registry: toolset.New(toolset.Options{}), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// client returns an HTTP client that has presented the token (it holds the cookie).
func client(t testing.TB, ts *httptest.Server) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar}
	resp, err := c.Get(ts.URL + "/?token=" + url.QueryEscape(testToken))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /?token=… = %s", resp.Status)
	}
	return c
}

func get(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// writeItem and writeSession render into b, for tests whose buffer is named out.
func writeItem(b *bytes.Buffer, it *itemView)      { out{b}.item(it) }
func writeSession(b *bytes.Buffer, pg sessionPage) { out{b}.session(pg) }
