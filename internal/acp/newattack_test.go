package acp_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/control"
)

// A hostile client's session/new lines, each answered by the fast path (or
// left by it) exactly as the SDK answers the same request: each is sent
// again with an unknown member in its params, which the fast path always
// leaves to the SDK and the SDK ignores, and the two processes' answers must
// match. The repeated-params, error-member and null-id lines were answered
// by the fast path where the SDK answers otherwise or not at all; of four
// requests with one id sent before the client's end, one or two were
// answered on either path.
func TestHostileNewSessionAnsweredAsTheSDK(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if err := os.Symlink(t.TempDir(), out); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	params := func(cwd string) string { return `{"cwd":` + q(cwd) + `,"mcpServers":[]}` }
	req := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":` + params + `}`
	}
	ok := params(root)
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	for name, c := range map[string]struct {
		line    string
		noInit  bool // session/new before initialize
		answers int  // how many lines with an id dsh writes, initialize's aside
	}{
		"plain":                  {line: req("1", ok), answers: 1},
		"before initialize":      {line: req("1", ok), noInit: true, answers: 1},
		"string id":              {line: req(`"<a>\u2028é"`, ok), answers: 1},
		"huge id":                {line: req("123456789012345678901234567890e10", ok), answers: 1},
		"id out of range":        {line: req("1e400", ok), answers: 1},
		"object id":              {line: req(`{"a":1}`, ok), answers: 1},
		"null id":                {line: req("null", ok)},
		"one id four times":      {line: strings.Repeat(req("5", ok)+"\n", 3) + req("5", ok), answers: 4},
		"repeated id":            {line: `{"jsonrpc":"2.0","id":1,"id":2,"method":"session/new","params":` + ok + `}`, answers: 1},
		"repeated params":        {line: strings.TrimSuffix(req("1", ok), "}") + `,"params":` + params(file) + `}`, answers: 1},
		"params in another case": {line: strings.TrimSuffix(req("1", ok), "}") + `,"Params":` + params(file) + `}`, answers: 1},
		"error member":           {line: strings.TrimSuffix(req("1", ok), "}") + `,"error":5}`},
		"cwd a file":             {line: req("1", params(file)), answers: 1},
		"cwd missing":            {line: req("1", params(filepath.Join(root, "gone"))), answers: 1},
		"cwd relative":           {line: req("1", params("rel")), answers: 1},
		"cwd a symlink out":      {line: req("1", params(out)), answers: 1},
		"cwd with a NUL":         {line: req("1", params(root+"/\x00")), answers: 1},
		"directory a symlink":    {line: req("1", `{"cwd":`+q(root)+`,"mcpServers":[],"additionalDirectories":[`+q(out)+`]}`), answers: 1},
		"truncated":              {line: req("1", ok)[:60], answers: 1},
		"over 8 MiB":             {line: req("1", `{"cwd":`+q(root)+`,"mcpServers":[],"_meta":{"k":"`+strings.Repeat("x", 9<<20)+`"}}`), answers: 1},
		"deep meta":              {line: req("1", `{"cwd":`+q(root)+`,"mcpServers":[],"_meta":{"k":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}}`), answers: 1},
		"unknown server type":    {line: req("1", `{"cwd":`+q(root)+`,"mcpServers":[{"type":"x","name":"n"}]}`), answers: 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lines := []string{c.line}
			if !c.noInit {
				lines = []string{initialize, c.line}
			}
			fast := answersTo(t, root, lines)
			sdkLines := append([]string(nil), lines...)
			sdkLines[len(sdkLines)-1] = strings.ReplaceAll(c.line, `"params":{`, `"params":{"zz":1,`)
			slow := answersTo(t, root, sdkLines)
			if strings.Join(fast, "\n") != strings.Join(slow, "\n") {
				t.Errorf("answered\n%s\nthe SDK\n%s", strings.Join(fast, "\n"), strings.Join(slow, "\n"))
			}
			if len(fast) != c.answers {
				t.Errorf("%d answers, want %d:\n%s", len(fast), c.answers, strings.Join(fast, "\n"))
			}
		})
	}
}

var newSessionID = regexp.MustCompile(`\d{8}-\d{6}-[a-z0-9]+`)

// answersTo runs dsh acp on lines, its stdin closed after them, and returns
// the lines it wrote that answer a request (initialize's aside), its session
// ids replaced.
func answersTo(t *testing.T, cwd string, lines []string) []string {
	t.Helper()
	cmd := exec.Command(dshBin, "acp", "--session-dir", t.TempDir())
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	cmd.WaitDelay = exitWait
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dsh acp: %v\n%s", err, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "DATA RACE") {
		t.Fatalf("dsh acp:\n%s", s)
	}
	var answers []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if l == "" || strings.Contains(l, `"method":`) || strings.HasPrefix(l, `{"jsonrpc":"2.0","id":0,`) {
			continue
		}
		answers = append(answers, newSessionID.ReplaceAllString(l, "ID"))
	}
	return answers
}

// A client that reuses a request id before its answer still has each new
// session announced — its commands sent, its socket made — and prompted
// without waiting: the answer to the second once found the first had taken
// the id's note, so the second session was never announced and its first
// prompt waited out the bound.
func TestNewSessionsOfOneIDAllAnnounced(t *testing.T) {
	c := start(t, options{script: `{"turns": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}`})
	line := `{"jsonrpc":"2.0","id":"again","method":"session/new","params":{"cwd":` + strings.TrimSpace(mustJSON(t, c.cwd)) + `,"mcpServers":[]}}` + "\n"
	if _, err := c.stdin.Write([]byte(line + line + line)); err != nil { // as the client's: the schema check reads them
		t.Fatal(err)
	}
	seen := map[sdk.SessionId]bool{}
	for range 3 {
		l := c.waitFor("a new answer to id again", func(l string) bool {
			m := newSessionID.FindString(l)
			return strings.HasPrefix(l, `{"jsonrpc":"2.0","id":"again","result":`) && m != "" && !seen[sdk.SessionId(m)]
		})
		seen[sdk.SessionId(newSessionID.FindString(l))] = true
	}
	for id := range seen {
		c.announced(id)
		c.mustPrompt(id, "hi", sdk.StopReasonEndTurn)
	}
	live, err := control.Attachable(c.sessionDir)
	if err != nil {
		t.Fatal(err)
	}
	for id := range seen {
		if !live[string(id)] {
			t.Errorf("session %s cannot be joined", id)
		}
	}
}

// Another client may join a new session as soon as it is announced, before
// any prompt; the editor then leaving ends dsh, the joined client's
// connection and the socket.
func TestNewSessionJoinedBeforeAPrompt(t *testing.T) {
	c := start(t, options{script: `{"turns": []}`})
	id := c.newSession()
	var cl *control.Client
	deadline := time.Now().Add(30 * time.Second)
	for cl == nil {
		var err error
		cl, err = control.DialSession(c.ctx(), c.sessionDir, string(id), control.DialOptions{From: "attach"})
		switch {
		case err == nil:
		case time.Now().After(deadline):
			t.Fatalf("joining %s: %v", id, err)
		case errors.Is(err, control.ErrNotLive) || errors.Is(err, fs.ErrNotExist):
			time.Sleep(5 * time.Millisecond) // made just after the announcement, which no one outside sees
		default:
			t.Fatalf("joining %s: %v", id, err)
		}
	}
	defer func() { _ = cl.Close() }()
	if cl.ID() != string(id) {
		t.Errorf("joined %q, want %q", cl.ID(), id)
	}
	c.close()
	select {
	case <-cl.Done():
	case <-time.After(exitWait):
		t.Fatal("the joined client's connection outlived dsh")
	}
	if _, err := os.Lstat(control.Path(c.sessionDir, string(id))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the session's socket is left behind: %v", err)
	}
}
