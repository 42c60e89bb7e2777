package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/acp/acpschema"
	"github.com/dsh-dev/dsh/internal/provider/remote/runnertest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var dshBin string // the dsh binary under test, built once

func TestMain(m *testing.M) {
	if os.Getenv("DSH_ACP_TEST_MCP") == "1" { // the stdio MCP server the tests give dsh
		os.Exit(runTestMCPServer())
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "dsh-acp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		dshBin = filepath.Join(dir, "dsh")
		args := append(append([]string{"build"}, raceFlags...), "-o", dshBin, "github.com/dsh-dev/dsh/cmd/dsh")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building dsh: %v\n%s", err, out)
			return 1
		}
		if _, err := runnertest.Build(dir); err != nil { // beside dsh, where dsh finds it
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		code := m.Run()
		validated.Lock()
		if validated.n.Messages > 0 {
			line := fmt.Sprintf("ACP end-to-end tests: %v\n", validated.n)
			fmt.Print(line)
			if path := os.Getenv("DSH_ACP_SCHEMA_LOG"); path != "" { // .ci/run shows it
				if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}
		}
		validated.Unlock()
		return code
	}()
	os.Exit(code)
}

// client is the test's ACP client: it drives a real `dsh acp` process through
// the SDK's ClientSideConnection and keeps every byte dsh wrote.
type client struct {
	t          *testing.T
	cmd        *exec.Cmd
	conn       *sdk.ClientSideConnection
	stdin      *lockedWriter
	out        *lines // what dsh wrote, line by line
	in         *lines // what the client wrote
	stderr     *bytes.Buffer
	cwd        string // the session's workspace, symlinks resolved
	sessionDir string
	exited     chan struct{}
	waitErr    error

	mu       sync.Mutex
	updates  []sdk.SessionNotification
	onUpdate func(sdk.SessionNotification)
	permit   func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	// permitCtx, if set, answers instead of permit, with the request's
	// context: dsh's $/cancel_request naming the request ends it.
	permitCtx func(context.Context, sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	// elicit answers elicitation/create, for a client that offers forms.
	elicit   func(context.Context, sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse
	elicited []sdk.UnstableCreateElicitationRequest
	formCaps bool
	asked    []sdk.RequestPermissionRequest
	init     sdk.InitializeResponse
	editor   *editor // the client's files, when it offers them
}

// editor is a client's view of its files: buffers with unsaved text, and
// what dsh asked of it.
type editor struct {
	buffers map[string]string // by absolute path
	reject  string            // non-empty: writes fail with this message
	reads   []string
	writes  []sdk.WriteTextFileRequest
	// around, if set, runs as the editor is about to open a path by name;
	// what it returns runs once it has: a racer timed on the worst moment.
	around func(path string) (after func())
}

type options struct {
	termMeta   bool
	mode       string
	script     string // the scripted provider's JSON turns
	scriptPath string // instead of script: a path to give dsh as it is
	cwd        string // default: a new temp dir
	sessionDir string // default: a new temp dir
	configHome string // XDG_CONFIG_HOME (the user's config and commands); default: a new temp dir
	args       []string
	env        []string
	// noScript starts dsh with no --provider: its settings and environment
	// choose (the sign-in tests).
	noScript bool
	// editor offers the client's files (fs.readTextFile, fs.writeTextFile).
	editor *editor
	// forms offers form elicitation.
	forms bool
}

// start runs `dsh acp` with a scripted provider and connects to it.
func start(t *testing.T, o options) *client {
	t.Helper()
	if o.cwd == "" {
		// A path of one length whatever t.TempDir's random part: the
		// context's size, estimated from what holds the path, is a golden's.
		o.cwd = evenDir(t)
	}
	if o.sessionDir == "" {
		o.sessionDir = evenDir(t)
	}
	if o.mode == "" {
		o.mode = "bypass"
	}
	cwd, err := filepath.EvalSymlinks(o.cwd)
	if err != nil {
		t.Fatal(err)
	}
	script := o.scriptPath
	if script == "" {
		script = filepath.Join(evenDir(t), "script.json")
		if err := os.WriteFile(script, []byte(o.script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &client{t: t, cwd: cwd, sessionDir: o.sessionDir, out: newLines(), in: newLines(),
		stderr: &bytes.Buffer{}, exited: make(chan struct{}), editor: o.editor, formCaps: o.forms}
	if o.configHome == "" {
		o.configHome = evenDir(t)
	}
	args := []string{"acp", "--session-dir", o.sessionDir}
	if !o.noScript {
		args = append(args, "--provider", "script", "--script", script)
	}
	if o.mode != "none" { // none: the configuration's
		args = append(args, "--mode", o.mode)
	}
	c.cmd = exec.Command(dshBin, append(args, o.args...)...)
	// The user's own configuration and commands must not leak into a test.
	c.cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+o.configHome), o.env...)
	c.cmd.Stderr = c.stderr
	// A process dsh started and left behind (a killed dsh's background job)
	// holds its stderr open: Wait must not wait for it to end.
	c.cmd.WaitDelay = exitWait
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	c.stdin = &lockedWriter{w: io.MultiWriter(stdin, c.in), raw: stdin, closer: stdin}
	c.conn = sdk.NewClientSideConnection(c, c.stdin, io.TeeReader(stdout, c.out))
	c.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		c.close()
		select {
		case <-c.exited:
		default:
			return // stderr is still being written
		}
		if strings.Contains(c.stderr.String(), "DATA RACE") {
			t.Errorf("the race detector found a data race in dsh")
		}
		if t.Failed() {
			t.Logf("dsh stderr:\n%s", c.stderr)
		}
		c.validate()
	})
	c.initialize(o.termMeta)
	return c
}

// exitWait bounds each wait of the harness for dsh to end, so that a failing
// test fails instead of hanging in its cleanup.
const exitWait = 10 * time.Second

// close closes dsh's stdin and waits for it to exit; one that does not is
// killed, and the test fails. Every wait is bounded.
func (c *client) close() {
	c.t.Helper()
	c.stdin.Close()
	select {
	case <-c.exited:
		return
	case <-time.After(exitWait):
	}
	_ = c.cmd.Process.Kill()
	c.t.Errorf("dsh did not exit within %v of its stdin closing; killed", exitWait)
	select {
	case <-c.exited:
	case <-time.After(2 * exitWait): // Kill, then WaitDelay for the pipes
		c.t.Errorf("dsh's Wait did not return after the kill")
	}
}

func (c *client) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	c.t.Cleanup(cancel)
	return ctx
}

func (c *client) initialize(termMeta bool) {
	c.t.Helper()
	caps := sdk.ClientCapabilities{}
	if c.editor != nil {
		caps.Fs = sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}
	}
	if termMeta {
		caps.Meta = map[string]any{"terminal_output": true}
	}
	if c.formCaps {
		caps.Elicitation = &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}
	}
	resp, err := c.conn.Initialize(c.ctx(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: caps, ClientInfo: &sdk.Implementation{Name: "dsh-acp-test", Version: "1"}})
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.init = resp
	if !resp.AgentCapabilities.LoadSession {
		c.t.Errorf("initialize: loadSession not advertised")
	}
}

func (c *client) newSession() sdk.SessionId {
	c.t.Helper()
	resp, err := c.conn.NewSession(c.ctx(), sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	c.announced(resp.SessionId)
	return resp.SessionId
}

// announced waits for the commands a new session offers, which dsh sends right
// after its answer to session/new, so that transcripts cut after it are stable.
func (c *client) announced(id sdk.SessionId) {
	c.t.Helper()
	c.waitFor("the available commands of "+string(id), func(l string) bool {
		return strings.Contains(l, `"sessionId":"`+string(id)+`"`) && strings.Contains(l, "available_commands_update")
	})
}

func (c *client) prompt(id sdk.SessionId, text string) (sdk.StopReason, error) {
	resp, err := c.conn.Prompt(c.ctx(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	return resp.StopReason, err
}

// mustPrompt runs a turn that must end with want.
func (c *client) mustPrompt(id sdk.SessionId, text string, want sdk.StopReason) {
	c.t.Helper()
	got, err := c.prompt(id, text)
	if err != nil {
		c.t.Fatalf("session/prompt: %v", err)
	}
	if got != want {
		c.t.Fatalf("session/prompt stopped with %q, want %q", got, want)
	}
}

// writeRaw sends bytes as they are, between the SDK's messages; they are not
// the client's messages the schema check reads.
func (c *client) writeRaw(s string) {
	c.t.Helper()
	if _, err := c.stdin.writeRaw([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// SessionUpdate implements sdk.Client.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	hook := c.onUpdate
	c.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return nil
}

// notifications are the updates the client got for session id so far.
func (c *client) notifications(id sdk.SessionId) []sdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sdk.SessionNotification
	for _, n := range c.updates {
		if n.SessionId == id {
			out = append(out, n)
		}
	}
	return out
}

// RequestPermission implements sdk.Client with the test's answer.
func (c *client) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, r)
	permit, permitCtx := c.permit, c.permitCtx
	c.mu.Unlock()
	if permitCtx != nil {
		return permitCtx(ctx, r), nil
	}
	if permit == nil {
		c.t.Errorf("dsh asked for permission unexpectedly: %s", title(r.ToolCall.Title))
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return permit(r), nil
}

// UnstableCreateElicitation implements the SDK's elicitation/create handler
// with the test's answer.
func (c *client) UnstableCreateElicitation(ctx context.Context, r sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	c.mu.Lock()
	c.elicited = append(c.elicited, r)
	elicit := c.elicit
	c.mu.Unlock()
	if elicit == nil {
		c.t.Errorf("dsh sent an elicitation unexpectedly: %+v", r.Form)
		return sdk.UnstableCreateElicitationResponse{Cancel: &sdk.UnstableCreateElicitationCancel{Action: "cancel"}}, nil
	}
	return elicit(ctx, r), nil
}

func title(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// dsh runs its own commands: it must never use the client's terminals, nor
// its files unless the client offered them.
func (c *client) unexpected(method string) error {
	c.t.Errorf("dsh called the client's %s", method)
	return errors.New("not offered")
}

// ReadTextFile answers from the editor's buffers (unsaved text), else the disk.
func (c *client) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	if c.editor == nil {
		return sdk.ReadTextFileResponse{}, c.unexpected("fs/read_text_file")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.editor.reads = append(c.editor.reads, r.Path)
	if c.editor.around != nil {
		defer c.editor.around(r.Path)()
	}
	if text, ok := c.editor.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(r.Path)
	return sdk.ReadTextFileResponse{Content: string(b)}, err
}

// WriteTextFile applies a change as Zed does: into the buffer, saved.
func (c *client) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if c.editor == nil {
		return sdk.WriteTextFileResponse{}, c.unexpected("fs/write_text_file")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.editor.writes = append(c.editor.writes, r)
	if c.editor.reject != "" {
		return sdk.WriteTextFileResponse{}, errors.New(c.editor.reject)
	}
	if c.editor.around != nil {
		defer c.editor.around(r.Path)()
	}
	c.editor.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, os.WriteFile(r.Path, []byte(r.Content), 0o644)
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, c.unexpected("terminal/create")
}

func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, c.unexpected("terminal/kill")
}

func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, c.unexpected("terminal/output")
}

func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, c.unexpected("terminal/release")
}

func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, c.unexpected("terminal/wait_for_exit")
}

// mark returns the number of lines dsh has written so far, to cut transcripts.
func (c *client) mark() int { return len(c.out.all()) }

// transcript is what dsh wrote from line `from` on, normalised for a golden file:
// the workspace path, the session id, the version and a job's age are
// tokenised, keys are sorted, the in_progress updates of calls that run at the
// same time (reads) are sorted by call id, and a running command's live output
// is settled (see settleLiveOutput).
func (c *client) transcript(from int, sessions ...sdk.SessionId) []string {
	c.t.Helper()
	var out []string
	for _, l := range c.out.all()[from:] {
		for i, id := range sessions {
			l = strings.ReplaceAll(l, string(id), fmt.Sprintf("{{session%d}}", i+1))
		}
		l = strings.ReplaceAll(l, c.cwd, "{{cwd}}")
		l = runningFor.ReplaceAllString(l, "running for {{age}}") // job_list: the machine's speed
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			c.t.Fatalf("dsh wrote a line that is not JSON: %q", l)
		}
		if r, ok := v["result"].(map[string]any); ok {
			if info, ok := r["agentInfo"].(map[string]any); ok {
				info["version"] = "{{version}}"
			}
			normalizeOptions(r["configOptions"])
			if ss, ok := r["sessions"].([]any); ok {
				for _, x := range ss {
					if m, ok := x.(map[string]any); ok {
						m["updatedAt"] = "{{time}}"
					}
				}
			}
		}
		if p, ok := v["params"].(map[string]any); ok {
			if u, ok := p["update"].(map[string]any); ok {
				normalizeOptions(u["configOptions"])
				if _, ok := u["updatedAt"]; ok {
					u["updatedAt"] = "{{time}}"
				}
			}
		}
		b, err := json.Marshal(v)
		if err != nil {
			c.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return settleLiveOutput(sortConcurrentStarts(out))
}

var runningFor = regexp.MustCompile(`running for (?:\d+h)?(?:\d+m)?\d+s`)

// settleLiveOutput makes a running command's live output independent of how the
// output was cut into chunks, which the machine's load decides, keeping what
// the client is sent: consecutive terminal_output updates of a call become one
// with their data joined; a console block refresh (clients without terminal
// meta) whose text is a prefix of the call's final console block shows the
// final text, and repeats of it are dropped. A refresh that is not such a
// prefix is left as it is, for the golden file to show.
func settleLiveOutput(ls []string) []string {
	type msg = map[string]any
	type line struct {
		text    string // as it was, unless changed
		m, u    msg    // the message, its tool_call_update if it is one
		changed bool
	}
	lines := make([]*line, len(ls))
	for i, l := range ls {
		ln := &line{text: l}
		if json.Unmarshal([]byte(l), &ln.m) == nil {
			p, _ := ln.m["params"].(msg)
			if u, _ := p["update"].(msg); u["sessionUpdate"] == "tool_call_update" {
				ln.u = u
			}
		}
		lines[i] = ln
	}
	// console is an update's console block: its last content item, if that is one.
	console := func(u msg) msg {
		cs, _ := u["content"].([]any)
		if len(cs) == 0 {
			return nil
		}
		last, _ := cs[len(cs)-1].(msg)
		inner, _ := last["content"].(msg)
		if text, _ := inner["text"].(string); strings.HasPrefix(text, "```console\n") {
			return inner
		}
		return nil
	}
	body := func(block msg) string {
		text := block["text"].(string)
		b := strings.TrimRight(text[strings.IndexByte(text, '\n')+1:], "`")
		return strings.TrimSuffix(b, "\n") // a fence ends a partial line with one
	}
	// termOut is the terminal_output of an update that carries only that.
	termOut := func(u msg) msg {
		meta, _ := u["_meta"].(msg)
		if len(u) != 3 || len(meta) != 1 {
			return nil
		}
		out, _ := meta["terminal_output"].(msg)
		return out
	}
	final := map[any]string{} // call id → the text of its final console block
	for _, ln := range lines {
		if st := ln.u["status"]; st == "completed" || st == "failed" {
			if c := console(ln.u); c != nil {
				final[ln.u["toolCallId"]] = c["text"].(string)
			}
		}
	}
	var out []*line
	for _, ln := range lines {
		var last *line
		if len(out) > 0 {
			last = out[len(out)-1]
		}
		if o := termOut(ln.u); o != nil && last != nil && last.u != nil && last.u["toolCallId"] == ln.u["toolCallId"] {
			if lo := termOut(last.u); lo != nil {
				lo["data"] = lo["data"].(string) + o["data"].(string)
				last.changed = true
				continue
			}
		}
		if c := console(ln.u); c != nil && len(ln.u) == 3 {
			if f, ok := final[ln.u["toolCallId"]]; ok && strings.HasPrefix(body(msg{"text": f}), body(c)) {
				c["text"] = f
				ln.changed = true
				if last != nil && last.u != nil && reflect.DeepEqual(last.m, ln.m) {
					continue // a later refresh, now the same
				}
			}
		}
		out = append(out, ln)
	}
	texts := make([]string, len(out))
	for i, ln := range out {
		texts[i] = ln.text
		if ln.changed {
			b, err := json.Marshal(ln.m)
			if err != nil {
				panic(err) // it was decoded from JSON
			}
			texts[i] = string(b)
		}
	}
	return texts
}

// normalizeOptions replaces the model picker's list, the built-in model table,
// with its size: it changes with the table, not with dsh's protocol.
func normalizeOptions(v any) {
	opts, _ := v.([]any)
	for _, o := range opts {
		if m, ok := o.(map[string]any); ok && m["id"] == "model" {
			if list, ok := m["options"].([]any); ok {
				m["options"] = fmt.Sprintf("{{%d models}}", len(list))
			}
		}
	}
}

// sortConcurrentStarts sorts each run of bare in_progress updates: read-only
// calls run concurrently and announce their start in any order.
func sortConcurrentStarts(ls []string) []string {
	isStart := func(l string) bool {
		var m struct {
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			return false
		}
		u := m.Params.Update
		return len(u) == 3 && u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress"
	}
	for i := 0; i < len(ls); {
		j := i
		for j < len(ls) && isStart(ls[j]) {
			j++
		}
		if j > i {
			slices.Sort(ls[i:j])
			i = j
		} else {
			i++
		}
	}
	return ls
}

// golden compares lines with testdata/NAME.golden.jsonl (rewritten with -update).
func golden(t *testing.T, name string, got []string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.jsonl")
	text := strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if text != string(want) {
		wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
		for i := range max(len(wl), len(got)) {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				t.Fatalf("%s differs from the transcript at line %d:\n got: %s\nwant: %s\n(run with -update to accept)", path, i+1, g, w)
			}
		}
	}
}

// waitFor waits until dsh has written a line for which ok is true.
func (c *client) waitFor(what string, ok func(line string) bool) string {
	c.t.Helper()
	l, found := c.out.wait(30*time.Second, ok)
	if !found {
		c.t.Fatalf("dsh never wrote %s", what)
	}
	return l
}

// lines collects a stream's lines for inspection while it is written.
type lines struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	ls   []string
}

func newLines() *lines {
	l := &lines{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if s := strings.TrimSpace(string(l.buf[:i])); s != "" {
			l.ls = append(l.ls, s)
		}
		l.buf = l.buf[i+1:]
	}
	l.cond.Broadcast()
	return len(p), nil
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ls)
}

func (l *lines) wait(d time.Duration, ok func(string) bool) (string, bool) {
	timer := time.AfterFunc(d, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(d)
	l.mu.Lock()
	defer l.mu.Unlock()
	for seen := 0; ; {
		for ; seen < len(l.ls); seen++ {
			if ok(l.ls[seen]) {
				return l.ls[seen], true
			}
		}
		if time.Now().After(deadline) {
			return "", false
		}
		l.cond.Wait()
	}
}

type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	raw    io.Writer // the pipe alone
	closer io.Closer
}

func (l *lockedWriter) writeRaw(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.Write(p)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes the pipe without the lock: a Write blocked on a dsh that stopped
// reading holds it, and closing the pipe is what ends that Write.
func (l *lockedWriter) Close() error { return l.closer.Close() }

// validate checks every message of the conversation, both directions, against
// the ACP schema (package acpschema); each violation is a test error, and the
// count is logged and added to the run's.
func (c *client) validate() {
	n, errs := acpschema.Conversation(c.out.all(), c.in.all())
	for _, err := range errs {
		c.t.Error(err)
	}
	if len(errs) == 0 && len(c.out.all()) == 0 {
		c.t.Errorf("dsh wrote nothing")
	}
	c.t.Logf("%v", n)
	validated.Lock()
	validated.n.Messages += n.Messages
	validated.n.Stable += n.Stable
	validated.n.Unstable += n.Unstable
	validated.Unlock()
}

// validated is what every test's conversations added up to.
var validated struct {
	sync.Mutex
	n acpschema.Counts
}

// TestSettleLiveOutput: a command's output cut into chunks one way or another
// settles into the same transcript; output that is not the final one's stays.
func TestSettleLiveOutput(t *testing.T) {
	upd := func(u string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":` + u + `}}`
	}
	refresh := func(out string) string {
		b, _ := json.Marshal("```console\n" + out + "```")
		return upd(`{"content":[{"content":{"text":` + string(b) + `,"type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","toolCallId":"c1"}`)
	}
	termOut := func(data string) string {
		b, _ := json.Marshal(data)
		return upd(`{"_meta":{"terminal_output":{"data":` + string(b) + `,"terminal_id":"c1"}},"sessionUpdate":"tool_call_update","toolCallId":"c1"}`)
	}
	done := strings.Replace(refresh("a\nb\n"), `"sessionUpdate"`, `"status":"completed","sessionUpdate"`, 1)
	start := upd(`{"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c1"}`)
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"refreshes of a partial output", []string{start, refresh("a\n"), refresh("a\nb\n"), done}, []string{start, refresh("a\nb\n"), done}},
		{"a refresh cut inside a line", []string{start, refresh("a\nb"), done}, []string{start, refresh("a\nb\n"), done}},
		{"a refresh that is not the output's start", []string{start, refresh("x\n"), done}, []string{start, refresh("x\n"), done}},
		{"terminal output in chunks", []string{start, termOut("a\n"), termOut("b"), termOut("\n"), done},
			[]string{start, termOut("a\nb\n"), done}},
	} {
		if got := settleLiveOutput(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// evenDir is a new directory whose path has one length whatever t.TempDir's
// random part: the context's size, estimated from text that holds paths, is
// in goldens.
func evenDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	d := filepath.Join(base, strings.Repeat("w", max(1, 160-len(base))))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
