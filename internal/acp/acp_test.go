package acp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/acpschema"
	"github.com/dsh-dev/dsh/internal/demo"
	"github.com/dsh-dev/dsh/internal/session"
)

// turn is one model response of a scripted conversation.
type turn struct {
	Thinking      string `json:"thinking,omitempty"`
	Text          string `json:"text,omitempty"`
	ToolCalls     []call `json:"tool_calls,omitempty"`
	WaitForCancel bool   `json:"wait_for_cancel,omitempty"`
	InputTokens   int64  `json:"input_tokens,omitempty"`
	OutputTokens  int64  `json:"output_tokens,omitempty"`
	Match         string `json:"match,omitempty"`
}

type call struct {
	ID   string         `json:"id"`
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

func script(t *testing.T, turns ...turn) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func bash(id, command string) call {
	return call{ID: id, Name: "bash", Args: map[string]any{"command": command}}
}

// runDemo runs the demo conversation, which uses every tool, and returns the
// session id and the index of the first line of the turn.
func runDemo(t *testing.T, termMeta bool, sessionDir string) (*client, sdk.SessionId) {
	t.Helper()
	cwd := t.TempDir()
	if err := demo.Install(cwd); err != nil {
		t.Fatal(err)
	}
	c := start(t, options{termMeta: termMeta, script: string(demo.Script), cwd: cwd, sessionDir: sessionDir})
	id := c.newSession()
	c.mustPrompt(id, demo.Prompt, sdk.StopReasonEndTurn)
	return c, id
}

// TestEveryTool runs the demo, which uses every tool, with and without the
// client's terminal meta, reloads the finished session in a new process, checks
// that the reloaded cards equal the live ones, and goes on with the conversation.
func TestEveryTool(t *testing.T) {
	for _, tc := range []struct {
		name     string
		termMeta bool
	}{{"terminal-meta", true}, {"fallback", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			live, id := runDemo(t, tc.termMeta, dir)
			liveLines := live.transcript(0, id)
			golden(t, "demo-"+tc.name, liveLines)
			checkEveryCard(t, live, tc.termMeta)

			logPath := filepath.Join(dir, string(id)+".jsonl")
			before, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			live.close()

			again := start(t, options{termMeta: tc.termMeta, cwd: live.cwd, sessionDir: dir,
				script: script(t, turn{Text: "Picking up where we left off."})})
			from := again.mark()
			if _, err := again.conn.LoadSession(again.ctx(), sdk.LoadSessionRequest{SessionId: id, Cwd: again.cwd, McpServers: []sdk.McpServer{}}); err != nil {
				t.Fatalf("session/load: %v", err)
			}
			loaded := again.transcript(from, id)
			golden(t, "demo-"+tc.name+"-load", loaded)
			l, r := fold(t, liveLines), fold(t, loaded)
			if n := len(l["order"].([]string)); n != 16 {
				t.Errorf("the live transcript shows %d calls, want the demo's 16", n)
			}
			if !reflect.DeepEqual(l, r) {
				t.Errorf("the reloaded cards differ from the live ones:\nlive:   %v\nloaded: %v", l, r)
			}

			again.mustPrompt(id, "Anything else?", sdk.StopReasonEndTurn)
			after, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(after), string(before)) {
				t.Fatal("the continued session did not append to its log")
			}
			recs, err := session.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			recs = withoutCheckpoints(recs)
			if got := recs[len(recs)-2]; got.Type != session.TypeAssistant || got.Text != "Picking up where we left off." {
				t.Errorf("the continued turn logged %+v", got)
			}
		})
	}
}

// checkEveryCard checks what the golden files show for the cases the issue names.
func checkEveryCard(t *testing.T, c *client, termMeta bool) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	kinds := map[string]bool{}
	var plans int
	for _, n := range c.updates {
		u := n.Update
		switch {
		case u.ToolCall != nil:
			kinds[string(u.ToolCall.Kind)] = true
			if u.ToolCall.RawInput == nil {
				t.Errorf("tool_call %s has no rawInput", u.ToolCall.ToolCallId)
			}
			for _, l := range u.ToolCall.Locations {
				if !filepath.IsAbs(l.Path) {
					t.Errorf("tool_call %s has a relative location %q", u.ToolCall.ToolCallId, l.Path)
				}
			}
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_10":
			// grep finds nothing: a failing command, with its exit status.
			if u.ToolCallUpdate.Status == nil || *u.ToolCallUpdate.Status != sdk.ToolCallStatusFailed {
				continue
			}
			if termMeta {
				exit, _ := u.ToolCallUpdate.Meta["terminal_exit"].(map[string]any)
				if exit["exit_code"] != float64(1) {
					t.Errorf("the failing command's terminal_exit is %v", u.ToolCallUpdate.Meta)
				}
			} else if !strings.Contains(contentText(u.ToolCallUpdate.Content), "Exit code 1.") {
				t.Errorf("the failing command's card does not say its exit code: %q", contentText(u.ToolCallUpdate.Content))
			}
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_02":
			if u.ToolCallUpdate.Meta["dsh"] == nil {
				continue
			}
			if !strings.HasPrefix(contentText(u.ToolCallUpdate.Content), "```python\n") {
				t.Errorf("the read card is not a python code block: %q", contentText(u.ToolCallUpdate.Content))
			}
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_06" && u.ToolCallUpdate.Content != nil:
			// replace_all: the applied hunks, each located at its line.
			if len(u.ToolCallUpdate.Content) == 0 || len(u.ToolCallUpdate.Locations) != len(u.ToolCallUpdate.Content) {
				t.Errorf("the replace_all edit shows %d hunks at %d locations", len(u.ToolCallUpdate.Content), len(u.ToolCallUpdate.Locations))
			}
			for _, l := range u.ToolCallUpdate.Locations {
				if l.Line == nil {
					t.Errorf("a hunk of the replace_all edit has no line")
				}
			}
		case u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_08" && u.ToolCallUpdate.Content != nil:
			// An overwrite is not shown as a new file.
			for _, cc := range u.ToolCallUpdate.Content {
				if cc.Diff == nil || cc.Diff.OldText == nil {
					t.Errorf("the overwrite of README.md shows as a new file")
				}
			}
		case u.Plan != nil:
			plans++
		}
	}
	for _, k := range []string{"read", "edit", "execute", "think"} {
		if !kinds[k] {
			t.Errorf("no tool_call of kind %s", k)
		}
	}
	if plans != 2 {
		t.Errorf("%d plan updates, want one per todo_write", plans)
	}
}

func contentText(cs []sdk.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// fold reduces a transcript to what a client ends up showing: the messages, and
// each call's final card (terminal output accumulated). The prompt the client
// sent itself and transient statuses are left out.
func fold(t *testing.T, lines []string) map[string]any {
	t.Helper()
	calls := map[string]map[string]any{}
	var order []string
	var msgs []string
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		u := m.Params.Update
		if m.Method != "session/update" {
			continue
		}
		switch kind := u["sessionUpdate"]; kind {
		case "agent_message_chunk", "agent_thought_chunk":
			text := u["content"].(map[string]any)["text"].(string)
			if n := len(msgs); n > 0 && strings.HasPrefix(msgs[n-1], kind.(string)+": ") {
				msgs[n-1] += text
			} else {
				msgs = append(msgs, kind.(string)+": "+text)
			}
		case "plan":
			msgs = append(msgs, "plan: "+mustJSON(t, u["entries"]))
		case "tool_call", "tool_call_update":
			id := u["toolCallId"].(string)
			c, ok := calls[id]
			if !ok {
				c = map[string]any{}
				calls[id] = c
				order = append(order, id)
			}
			for k, v := range u {
				switch k {
				case "_meta":
					for mk, mv := range v.(map[string]any) {
						if mk == "terminal_output" {
							data, _ := c["terminal_output"].(string)
							c["terminal_output"] = data + mv.(map[string]any)["data"].(string)
						} else {
							c[mk] = mv
						}
					}
				case "sessionUpdate", "toolCallId":
				default:
					c[k] = v
				}
			}
		}
	}
	return map[string]any{"messages": msgs, "calls": calls, "order": order}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPermissionAllowed asks before a write and a command; "always" covers the
// same command the second time.
func TestPermissionAllowed(t *testing.T) {
	c := start(t, options{termMeta: true, mode: "default", script: script(t,
		turn{Text: "Writing the notes.", ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{ToolCalls: []call{bash("b1", "touch notes.txt")}},
		turn{ToolCalls: []call{bash("b2", "touch notes.txt")}},
		turn{Text: "Done."},
	)})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		opt := "allow_once"
		if r.ToolCall.ToolCallId == "b1" {
			opt = "allow_always"
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(opt))}
	}
	id := c.newSession()
	c.mustPrompt(id, "Write notes.", sdk.StopReasonEndTurn)
	golden(t, "permission-allowed", c.transcript(0, id))

	c.mu.Lock()
	asked := c.asked
	c.mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("dsh asked %d times, want 2 (the second touch is always allowed)", len(asked))
	}
	// The request carries the card: the diff of the new file, the command.
	d := asked[0].ToolCall.Content
	if len(d) != 1 || d[0].Diff == nil || d[0].Diff.Path != filepath.Join(c.cwd, "notes.txt") ||
		d[0].Diff.NewText != "hello\n" || d[0].Diff.OldText != nil {
		t.Errorf("the write's permission request shows %s", mustJSON(t, d))
	}
	if title(asked[1].ToolCall.Title) != "touch notes.txt" {
		t.Errorf("the command's permission request is titled %q", title(asked[1].ToolCall.Title))
	}
	// "Always" says what it remembers.
	if opts := asked[1].Options; len(opts) != 3 || opts[1].Name != "Always allow touch" {
		t.Errorf("the command's options are %s", mustJSON(t, opts))
	}
	if opts := asked[0].Options; len(opts) != 3 || opts[1].Name != "Always allow file edits in this session" {
		t.Errorf("the write's options are %s", mustJSON(t, opts))
	}
	if b, err := os.ReadFile(filepath.Join(c.cwd, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("notes.txt = %q, %v", b, err)
	}
}

func TestPermissionRejected(t *testing.T) {
	c := start(t, options{termMeta: true, mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "Understood, I left it alone."},
	)})
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("reject_once")}
	}
	id := c.newSession()
	c.mustPrompt(id, "Write notes.", sdk.StopReasonEndTurn)
	golden(t, "permission-rejected", c.transcript(0, id))
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the rejected write happened: %v", err)
	}
}

// runningCommand is a turn whose command prints, records its process group id
// and sleeps until it is killed.
func runningCommand(t *testing.T) string {
	return script(t,
		turn{Text: "Starting the server.", ToolCalls: []call{bash("c1", "echo $$ > pgid; echo started; sleep 30")}},
		turn{Text: "It stopped."},
	)
}

// started is true for the terminal output of the running command.
func started(l string) bool {
	return strings.Contains(l, `"terminal_output"`) && strings.Contains(l, `started\n`)
}

// pgidGone checks that the command's process group is dead.
func pgidGone(t *testing.T, cwd string) {
	t.Helper()
	groupGone(t, filepath.Join(cwd, "pgid"))
}

// groupGone checks that the process group whose id the file holds is dead.
func groupGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The kill is synchronous, but the reaping of the group's last process is not.
	for range 100 {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the process group %d of %s is still alive", pgid, filepath.Base(file))
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// TestCancelCommand cancels the turn while a command runs: the command is killed,
// its card fails with what it printed, and the turn answers "cancelled".
func TestCancelCommand(t *testing.T) {
	c := start(t, options{termMeta: true, script: runningCommand(t)})
	id := c.newSession()
	go func() {
		c.waitFor("the command's output", started)
		_ = c.conn.Cancel(c.ctx(), sdk.CancelNotification{SessionId: id})
	}()
	c.mustPrompt(id, "Start the server.", sdk.StopReasonCancelled)
	golden(t, "cancel-command", c.transcript(0, id))
	pgidGone(t, c.cwd)
}

// TestSecondPrompt: a prompt sent while one runs waits for it; a cancel ends
// the running turn and drops the waiting prompt, which is never logged.
func TestSecondPrompt(t *testing.T) {
	c := start(t, options{termMeta: true, script: runningCommand(t)})
	id := c.newSession()
	first := make(chan sdk.StopReason, 1)
	go func() {
		stop, err := c.prompt(id, "Start the server.")
		if err != nil {
			t.Errorf("the first prompt: %v", err)
		}
		first <- stop
	}()
	c.waitFor("the command's output", started)
	second := make(chan sdk.StopReason, 1)
	go func() {
		stop, err := c.prompt(id, "And another thing.")
		if err != nil {
			t.Errorf("the queued prompt: %v", err)
		}
		second <- stop
	}()
	c.waitFor("the second prompt to be queued", func(l string) bool { return strings.Contains(l, "Queued: this prompt runs") })
	if err := c.conn.Cancel(c.ctx(), sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if a, b := <-first, <-second; a != sdk.StopReasonCancelled || b != sdk.StopReasonCancelled {
		t.Errorf("the running prompt stopped %q, the queued one %q; want both cancelled", a, b)
	}
	var users []string
	for _, r := range records(t, c, id) {
		if r.Type == session.TypeUser {
			users = append(users, r.Text)
		}
	}
	if !slices.Equal(users, []string{"Start the server."}) {
		t.Errorf("logged prompts %q: a dropped prompt must not be logged", users)
	}
	pgidGone(t, c.cwd)
}

// TestQueuedPrompt: a prompt sent while one runs is run when it ends, in
// order, and answered with its own stop reason.
func TestQueuedPrompt(t *testing.T) {
	c := start(t, options{script: script(t,
		turn{Text: "Working.", ToolCalls: []call{bash("c1", "echo started; sleep 1")}},
		turn{Text: "The first is done."},
		turn{Text: "The second is done."},
	)})
	id := c.newSession()
	first := make(chan sdk.StopReason, 1)
	go func() {
		stop, err := c.prompt(id, "First.")
		if err != nil {
			t.Errorf("the first prompt: %v", err)
		}
		first <- stop
	}()
	c.waitFor("the command's call", func(l string) bool { return strings.Contains(l, "echo started") })
	stop, err := c.prompt(id, "Second.") // queued: it waits for the first
	if err != nil || stop != sdk.StopReasonEndTurn {
		t.Fatalf("the queued prompt: %q, %v", stop, err)
	}
	if got := <-first; got != sdk.StopReasonEndTurn {
		t.Errorf("the first prompt stopped %q", got)
	}
	var seq []string
	for _, r := range records(t, c, id) {
		switch r.Type {
		case session.TypeUser, session.TypeAssistant:
			seq = append(seq, r.Text)
		case session.TypeTurnEnd:
			seq = append(seq, "end")
		case session.TypeHeader, session.TypeThinking, session.TypeToolCall, session.TypeProgress, session.TypeToolResult,
			session.TypePlan, session.TypeMode, session.TypeAllow, session.TypeCompaction, session.TypeInstructions,
			session.TypeModel, session.TypeCheckpoint, session.TypeRestore, session.TypeHook, session.TypeCommand,
			session.TypeReply, session.TypeDamaged, session.TypeDecision, session.TypeTitle:
		}
	}
	want := []string{"First.", "Working.", "The first is done.", "end", "Second.", "The second is done.", "end"}
	if !slices.Equal(seq, want) {
		t.Errorf("the log holds %q, want %q", seq, want)
	}
}

// TestClientVanishes closes stdin while a command runs: dsh exits, kills the
// command and the session's background job, and leaves a log that reads back
// with the turn ended.
func TestClientVanishes(t *testing.T) {
	c := start(t, options{termMeta: true, script: script(t,
		turn{ToolCalls: []call{{ID: "j1", Name: "bash", Args: map[string]any{
			"command": "echo $$ > jobpgid; sleep 300", "run_in_background": true}}}},
		turn{ToolCalls: []call{bash("c1", "echo $$ > pgid; echo started; sleep 30")}},
	)})
	id := c.newSession()
	go func() { _, _ = c.prompt(id, "Start the server.") }()
	c.waitFor("the command's output", started)
	gone := time.Now()
	c.stdin.Close()
	select {
	case <-c.exited:
		t.Logf("dsh exited %v after stdin closed", time.Since(gone).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("dsh did not exit after stdin closed")
	}
	pgidGone(t, c.cwd)
	groupGone(t, filepath.Join(c.cwd, "jobpgid")) // the session's background job
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatalf("the log does not read back: %v", err)
	}
	var result *session.Record
	for i := range recs {
		if recs[i].Type == session.TypeToolResult && recs[i].CallID == "c1" {
			result = &recs[i]
		}
	}
	if result == nil || !result.Result.IsError {
		t.Errorf("the killed command's result: %+v", result)
	}
	recs = withoutCheckpoints(recs)
	if last := recs[len(recs)-1]; last.Type != session.TypeTurnEnd || last.StopReason != "cancelled" {
		t.Errorf("the log ends with %+v, want a cancelled turn_end", last)
	}
}

// TestMalformed sends what is not JSON-RPC: each gets an error response and the
// connection goes on.
func TestMalformed(t *testing.T) {
	c := start(t, options{script: script(t, turn{Text: "Hi."})})
	for _, tc := range []struct {
		send, want string
	}{
		{"this is not json\n", `{"code":-32700`},
		{"[1,2,3]\n", `{"code":-32600`},
		{`{"jsonrpc":"2.0","id":41}` + "\n", `"id":41,"error":{"code":-32600`},
		{`{"jsonrpc":"1.0","id":42,"method":"initialize"}` + "\n", `"id":42,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":43,"method":7}` + "\n", `"id":43,"error":{"code":-32600`},
		{`{"jsonrpc":"2.0","id":44,"method":"no/such/method","params":{}}` + "\n", `"id":44,"error":{"code":-32601`},
		{`{"jsonrpc":"2.0","id":45,"method":"session/prompt","params":{"sessionId":3}}` + "\n", `"id":45,"error":{"code":-32602`},
		{`{"jsonrpc":"2.0","id":46,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}` + "\n", `"id":46,"error":{"code":-32602`},
	} {
		from := c.mark()
		c.writeRaw(tc.send)
		c.waitFor("an answer to "+tc.send, func(l string) bool { return strings.Contains(l, tc.want) })
		if n := len(c.out.all()) - from; n != 1 {
			t.Errorf("%q got %d answers", tc.send, n)
		}
	}
	id := c.newSession()
	c.mustPrompt(id, "Still there?", sdk.StopReasonEndTurn)
}

// TestUnknownSession names the session it does not know.
func TestUnknownSession(t *testing.T) {
	c := start(t, options{script: script(t, turn{Text: "Hi."})})
	const bogus = "20990101-000000-aaaaaaaa"
	check := func(what string, err error) {
		t.Helper()
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32002 || !strings.Contains(re.Message, bogus) {
			t.Errorf("%s of an unknown session: %v", what, err)
		}
	}
	_, err := c.prompt(bogus, "Hello?")
	check("session/prompt", err)
	_, err = c.conn.LoadSession(c.ctx(), sdk.LoadSessionRequest{SessionId: bogus, Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	check("session/load", err)
	_, err = c.conn.SetSessionMode(c.ctx(), sdk.SetSessionModeRequest{SessionId: bogus, ModeId: "bypass"})
	check("session/set_mode", err)
	_, err = c.conn.LoadSession(c.ctx(), sdk.LoadSessionRequest{SessionId: "../../etc/passwd", Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32002 {
		t.Errorf("session/load of a path: %v", err)
	}
	if err := c.conn.Cancel(c.ctx(), sdk.CancelNotification{SessionId: bogus}); err != nil {
		t.Fatal(err)
	}
	id := c.newSession()
	if _, err := c.conn.SetSessionMode(c.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "no-such-mode"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	c.mustPrompt(id, "Hello?", sdk.StopReasonEndTurn)
}

// TestSchemaCheck makes sure the schema check can fail: a message off the schema
// is caught, and the same message on it passes.
func TestSchemaCheck(t *testing.T) {
	methods := acpschema.Methods{acpschema.Client: {"7": "session/prompt"}}
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","status":"pending"}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","status":"running"}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"x","status":"pending"}]}}}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`, true},
		{`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"error"}}`, false},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32600}}`, false},
		{`{"jsonrpc":"2.0","id":8,"result":{}}`, false}, // answers no request
		{`{"jsonrpc":"2.0","method":"session/mystery","params":{}}`, false},
		{`{"id":7,"result":{"stopReason":"end_turn"}}`, false},
	} {
		_, err := acpschema.Message(acpschema.Agent, tc.line, methods)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.line, err, tc.ok)
		}
	}
}

// TestCancelWhilePermissionPending cancels while the user has not answered: the
// client answers "cancelled", as the protocol requires, and the turn ends so.
func TestCancelWhilePermissionPending(t *testing.T) {
	c := start(t, options{mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "never reached"},
	)})
	id := c.newSession()
	cancelled := make(chan struct{})
	c.permit = func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		_ = c.conn.Cancel(c.ctx(), sdk.CancelNotification{SessionId: id})
		<-cancelled
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}
	}
	go func() {
		c.waitFor("the prompt's answer", func(l string) bool { return strings.Contains(l, `"stopReason"`) })
		close(cancelled)
	}()
	c.mustPrompt(id, "Write notes.", sdk.StopReasonCancelled)
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write ran after the turn was cancelled: %v", err)
	}
	c.mu.Lock()
	final := c.updates[len(c.updates)-1]
	c.mu.Unlock()
	if u := final.Update.ToolCallUpdate; u == nil || u.Status == nil || *u.Status != sdk.ToolCallStatusFailed {
		t.Errorf("the unanswered call did not fail: %s", mustJSON(t, final))
	}
}

// TestSetMode switches a session to bypass: the next call runs without asking.
func TestSetMode(t *testing.T) {
	c := start(t, options{mode: "default", script: script(t,
		turn{ToolCalls: []call{{ID: "w1", Name: "write", Args: map[string]any{"path": "notes.txt", "content": "hello\n"}}}},
		turn{Text: "Written."},
	)})
	id := c.newSession()
	if _, err := c.conn.SetSessionMode(c.ctx(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "bypass"}); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(id, "Write notes.", sdk.StopReasonEndTurn)
	if _, err := os.Stat(filepath.Join(c.cwd, "notes.txt")); err != nil {
		t.Errorf("the write did not run in bypass mode: %v", err)
	}
}

// TestProviderError reports a provider that cannot be set up on the prompt, with
// its reason, and logs nothing for a prompt that could not run.
func TestProviderError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-script.json")
	c := start(t, options{scriptPath: missing})
	id := c.newSession()
	_, err := c.prompt(id, "Hello?")
	var re *sdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "no-such-script.json") {
		t.Fatalf("a prompt without a usable provider: %v", err)
	}
	recs, err := session.ReadFile(filepath.Join(c.sessionDir, string(id)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("the log holds %d records, want only its header", len(recs))
	}
}
