package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/host"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// driven is a server that drives sessions it opens in root with a scripted
// provider, the way dsh web's opener does with the user's settings.
type driven struct {
	srv    *Server
	ts     *httptest.Server
	dir    string // the session logs
	root   string // the one directory sessions may start in
	opened atomic.Int32
}

func driveServer(t *testing.T, turns string) *driven {
	t.Helper()
	p, err := script.Parse([]byte(turns))
	if err != nil {
		t.Fatal(err)
	}
	d := &driven{dir: t.TempDir(), root: t.TempDir()}
	open := func(_ context.Context, r OpenRequest) (Live, error) {
		d.opened.Add(1)
		o := host.Options{SessionDir: d.dir, Root: r.Dir, Mode: host.ModeDefault, Ask: true,
			Provider: func() (provider.Provider, error) { return p, nil }, Warn: func(s string) { t.Log(s) }}
		var s *host.Session
		var err error
		if r.Resume == "" {
			s, err = host.Create(o)
		} else {
			s, err = host.Load(o, filepath.Join(d.dir, r.Resume+".jsonl"), nil)
		}
		if err != nil {
			return Live{}, err
		}
		ch := make(chan host.Event, 64)
		sub := s.Subscribe(func(e host.Event) { ch <- e })
		go func() {
			<-sub.Done()
			close(ch)
		}()
		return Live{Session: s, Events: ch}, nil
	}
	srv, err := New(Options{Dir: d.dir, Token: testToken, Registry: toolset.New(toolset.Options{}), Location: time.UTC,
		Open: open, Roots: []string{d.root}, MaxBody: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	d.srv = srv
	d.ts = httptest.NewServer(srv)
	t.Cleanup(func() {
		d.ts.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// post sends a JSON body from the page's origin, as the page's script does.
func post(t *testing.T, c *http.Client, base, path string, body any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", base)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

// start opens a session in the root and returns its id.
func (d *driven) start(t *testing.T, c *http.Client) string {
	t.Helper()
	code, body := post(t, c, d.ts.URL, "/new", map[string]any{"dir": d.root})
	if code != http.StatusOK {
		t.Fatalf("POST /new = %d %s", code, body)
	}
	var o opened
	if err := json.Unmarshal([]byte(body), &o); err != nil || !session.ValidID(o.ID) || o.URL != "/s/"+o.ID {
		t.Fatalf("POST /new answered %s (%v)", body, err)
	}
	return o.ID
}

// waitEvent reads events until one named name whose data matches re.
func waitEvent(t *testing.T, ctx context.Context, ch <-chan sseEventT, name string, re *regexp.Regexp) sseEventT {
	t.Helper()
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %s event matching %s", name, re)
			}
			if e.event == name && re.MatchString(e.data) {
				return e
			}
		case <-ctx.Done():
			t.Fatalf("no %s event matching %s", name, re)
		}
	}
}

var askKey = regexp.MustCompile(`data-ask="([a-z0-9]+)"`)

// A prompt sent from the page runs through the host: its write waits for the
// page's approval, shown with the call's diff card; allowed, the file is
// written and the turn's records reach the page. /undo asks again with the
// diff it would apply, and puts the file back.
func TestDrivePromptApproveUndo(t *testing.T) {
	d := driveServer(t, `{"turns": [
		{"text": "Writing it.", "tool_calls": [{"id": "w1", "name": "write", "args": {"path": "hello.txt", "content": "hello from the page\n"}}]},
		{"text": "Done."}
	]}`)
	c := client(t, d.ts)
	id := d.start(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	control := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/control", "")
	waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="idle"`))
	records := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/events?from=0", "")

	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "write hello.txt"}); code != http.StatusAccepted {
		t.Fatalf("POST input = %d %s", code, body)
	}
	waitEvent(t, ctx, control, "delta", regexp.MustCompile(`^<span class="delta">Wr`))
	ask := waitEvent(t, ctx, control, "ask", regexp.MustCompile(`data-decision="allow_once"`))
	if !strings.Contains(ask.data, `data-card="diff-call"`) || !strings.Contains(ask.data, "hello from the page") {
		t.Errorf("the permission box does not show the write's diff: %s", ask.data)
	}
	key := askKey.FindStringSubmatch(ask.data)[1]
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"decision": "allow_once"}); code != http.StatusNoContent {
		t.Fatalf("answer = %d %s", code, body)
	}
	waitEvent(t, ctx, control, "asked", regexp.MustCompile("^"+key+"$"))
	// Answered once: a second answer finds nothing waiting.
	if code, _ := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"decision": "reject"}); code != http.StatusConflict {
		t.Errorf("a second answer = %d, want 409", code)
	}
	waitEvent(t, ctx, records, "item", regexp.MustCompile(`data-item="turn-end"`))
	// Idle once the turn's end checkpoint is taken: what /undo undoes. The
	// ask's end may be told after the turn's, its idle status already
	// passed: a fresh stream starts from the status as it is.
	control = readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/control", "")
	waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="idle"`))
	if b, err := os.ReadFile(filepath.Join(d.root, "hello.txt")); err != nil || string(b) != "hello from the page\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}

	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "/undo"}); code != http.StatusAccepted {
		t.Fatalf("POST /undo = %d %s", code, body)
	}
	ask = waitEvent(t, ctx, control, "ask", regexp.MustCompile(`data-decision="allow_once"`))
	if !strings.Contains(ask.data, "hello from the page") {
		t.Errorf("the undo's box does not show its diff: %s", ask.data)
	}
	key = askKey.FindStringSubmatch(ask.data)[1]
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"decision": "allow_once"}); code != http.StatusNoContent {
		t.Fatalf("answer the undo = %d %s", code, body)
	}
	waitEvent(t, ctx, records, "item", regexp.MustCompile(`id="restore-`))
	if _, err := os.Stat(filepath.Join(d.root, "hello.txt")); !os.IsNotExist(err) {
		t.Errorf("hello.txt after /undo: %v", err)
	}
	// The page of the driven session has the composer; the list offers to start one.
	if _, page := get(t, c, d.ts.URL+"/s/"+id); !strings.Contains(page, `id="composer"`) || !strings.Contains(page, `id="status"`) {
		t.Error("the driven session's page has no composer")
	}
	if _, page := get(t, c, d.ts.URL+"/"); !strings.Contains(page, `id="new-session"`) {
		t.Error("the list has no form to start a session")
	}
}

// Cancel from the page ends the running turn as cancelled.
func TestDriveCancel(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "Thinking for ever…", "wait_for_cancel": true}]}`)
	c := client(t, d.ts)
	id := d.start(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	control := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/control", "")
	records := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/events?from=0", "")
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "think"}); code != http.StatusAccepted {
		t.Fatalf("POST input = %d %s", code, body)
	}
	waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="working"`))
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/cancel", nil); code != http.StatusNoContent {
		t.Fatalf("cancel = %d %s", code, body)
	}
	waitEvent(t, ctx, records, "item", regexp.MustCompile(`data-item="turn-end" data-stop="cancelled"`))
}

// A question's answer must be one of its choices (or text where it takes
// text); a decision must be one of the three, and "always" only where the
// call may be remembered.
func TestAnswerChecked(t *testing.T) {
	q := host.NewQuestion(host.QuestionRequest{})
	q.Request.Question.Choices = nil
	if _, err := questionAnswer(q, answerRequest{Choice: "nope"}); err == nil {
		t.Error("an unknown choice was taken")
	}
	if _, err := questionAnswer(q, answerRequest{Text: "free"}); err == nil {
		t.Error("text was taken by a question without free text")
	}
	if a, err := questionAnswer(q, answerRequest{}); err != nil || !a.None() {
		t.Errorf("no answer: %v %v", a, err)
	}
}

// A finished session is continued from its page (reopened in the directory it
// ran in, which must be one the page may use) and deleted from it through the
// host; one live in another process is not deleted.
func TestDriveResumeDelete(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "Again."}]}`)
	c := client(t, d.ts)
	const old, outside, busy = "20250314-093012-old00000", "20250314-093013-out00000", "20250314-093014-busy0000"
	for id, cwd := range map[string]string{old: d.root, outside: t.TempDir(), busy: d.root} {
		log, err := session.Create(d.dir, id, cwd, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []session.Record{{Type: session.TypeUser, Text: "hello"}, {Type: session.TypeTurnEnd, StopReason: "end_turn"}} {
			if err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if id == busy {
			t.Cleanup(func() { log.Close() }) // held open: live, as in another dsh process
		} else {
			log.Close()
		}
	}
	if _, page := get(t, c, d.ts.URL+"/s/"+old); !strings.Contains(page, `data-post="resume"`) || !strings.Contains(page, `data-post="delete"`) {
		t.Error("a finished session's page offers neither to continue nor to delete it")
	}
	if _, page := get(t, c, d.ts.URL+"/s/"+busy); strings.Contains(page, `data-post="resume"`) || strings.Contains(page, `data-post="delete"`) {
		t.Error("a live session's page offers to continue or delete it")
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+outside+"/rename", map[string]any{"title": "named from the page"}); code != http.StatusNoContent {
		t.Errorf("rename a finished session: %d %s", code, body)
	}
	if _, page := get(t, c, d.ts.URL+"/s/"+outside); !strings.Contains(page, "renamed: named from the page") {
		t.Error("the renamed session's page does not show its new name")
	}
	if code, _ := post(t, c, d.ts.URL, "/s/"+outside+"/rename", map[string]any{"title": "  "}); code != http.StatusBadRequest {
		t.Errorf("an empty title: %d", code)
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+outside+"/resume", nil); code != http.StatusForbidden {
		t.Errorf("resume a session that ran outside the roots: %d %s", code, body)
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+old+"/resume", nil); code != http.StatusOK || !strings.Contains(body, old) {
		t.Fatalf("resume: %d %s", code, body)
	}
	if _, page := get(t, c, d.ts.URL+"/s/"+old); !strings.Contains(page, `id="composer"`) {
		t.Error("the continued session has no composer")
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+busy+"/delete", nil); code != http.StatusConflict {
		t.Errorf("delete a session live elsewhere: %d %s", code, body)
	}
	for _, id := range []string{old, outside} { // the driven one is closed first
		if code, body := post(t, c, d.ts.URL, "/s/"+id+"/delete", nil); code != http.StatusNoContent {
			t.Errorf("delete %s: %d %s", id, code, body)
		}
		if _, err := os.Stat(filepath.Join(d.dir, id+".jsonl")); !os.IsNotExist(err) {
			t.Errorf("%s's log after delete: %v", id, err)
		}
	}
	if code, _ := post(t, c, d.ts.URL, "/s/"+old+"/delete", nil); code != http.StatusNotFound {
		t.Errorf("delete it again: %d", code)
	}
}

// A permission request's and a question's box, a notice and the status show
// what the session holds as text: the model's tool name, its call, the
// question, its choices and a notice make no element or attribute.
func TestAskBoxIsText(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "ok"}]}`)
	b := d.srv.newBuilder("s", false)
	perm := &ask{key: "a1", perm: &host.Permission{Request: host.PermissionRequest{CallID: evilScript, Tool: evilScript,
		Card: &card.GenericCall{Title: evil}}}}
	perm.perm.Request.Approval.Label, perm.perm.Request.Approval.Remember = evilPre, true
	q := &ask{key: "a2", q: host.NewQuestion(host.QuestionRequest{CallID: "q", Tool: "ask_user",
		Question: tool.Question{Text: evil, Choices: []card.Choice{{ID: evilLink, Label: evilImg}}, FreeText: true}})}
	var w bytes.Buffer
	out{&w}.ask(b.askView(perm))
	out{&w}.ask(b.askView(q))
	out{&w}.notice(evil)
	out{&w}.status(host.Status{Model: evilScript, Thinking: evilPre, Mode: host.Mode(evilImg)})
	nodes, err := html.ParseFragment(&w, &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, n := range nodes {
		checkTree(t, "ask", n, 0)
		text.WriteString(textOf(n))
	}
	for _, want := range []string{evilScript, evilPre, evilLink, evilImg} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the boxes do not show %q as text", want)
		}
	}
}

// A tool's question is answered from the page with one of its choices; the
// model's tool result holds the answer.
func TestDriveQuestion(t *testing.T) {
	d := driveServer(t, `{"turns": [
		{"tool_calls": [{"id": "q1", "name": "ask_user", "args": {"question": "Which colour?", "options": [{"label": "red"}, {"label": "blue"}]}}]},
		{"text": "Blue it is."}]}`)
	c := client(t, d.ts)
	id := d.start(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	control := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/control", "")
	records := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/events?from=0", "")
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "ask me"}); code != http.StatusAccepted {
		t.Fatalf("input: %d %s", code, body)
	}
	ask := waitEvent(t, ctx, control, "ask", regexp.MustCompile(`Which colour\?`))
	blue := regexp.MustCompile(`data-choice="([^"]+)">blue<`).FindStringSubmatch(ask.data)
	if blue == nil {
		t.Fatalf("no blue choice in %s", ask.data)
	}
	key := askKey.FindStringSubmatch(ask.data)[1]
	if code, _ := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"choice": "green"}); code != http.StatusBadRequest {
		t.Errorf("a choice it does not offer: %d", code)
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"choice": blue[1]}); code != http.StatusNoContent {
		t.Fatalf("answer: %d %s", code, body)
	}
	waitEvent(t, ctx, records, "item", regexp.MustCompile(`data-item="turn-end"`))
	recs, err := session.ReadFile(filepath.Join(d.dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.CallID == "q1" && r.Result != nil {
			for _, c := range r.Result.Content {
				answered = answered || strings.Contains(c.Text, "blue")
			}
		}
	}
	if !answered {
		t.Error("the question's result does not hold the answer blue")
	}
}

// /rewind N from the page shows the diff that goes back before change N, asks,
// and puts back the files of every change since.
func TestDriveRewind(t *testing.T) {
	d := driveServer(t, `{"turns": [
		{"tool_calls": [{"id": "a", "name": "write", "args": {"path": "a.txt", "content": "first\n"}}]},
		{"text": "One."},
		{"tool_calls": [{"id": "b", "name": "write", "args": {"path": "b.txt", "content": "second\n"}}]},
		{"text": "Two."}]}`)
	c := client(t, d.ts)
	id := d.start(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	control := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/control", "")
	waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="idle"`))
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "/mode accept-edits"}); code != http.StatusAccepted {
		t.Fatalf("/mode: %d %s", code, body)
	}
	waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-mode="accept-edits"`))
	for _, p := range []string{"write a", "write b"} {
		if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": p}); code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="working"`))
		waitEvent(t, ctx, control, "status", regexp.MustCompile(`data-state="idle"`))
	}
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/input", map[string]any{"text": "/rewind 1"}); code != http.StatusAccepted {
		t.Fatalf("/rewind: %d %s", code, body)
	}
	ask := waitEvent(t, ctx, control, "ask", regexp.MustCompile(`data-decision="allow_once"`))
	if !strings.Contains(ask.data, "first") || !strings.Contains(ask.data, "second") {
		t.Errorf("the rewind's box does not show both files' diff: %s", ask.data)
	}
	key := askKey.FindStringSubmatch(ask.data)[1]
	if code, body := post(t, c, d.ts.URL, "/s/"+id+"/answer/"+key, map[string]any{"decision": "allow_once"}); code != http.StatusNoContent {
		t.Fatalf("answer: %d %s", code, body)
	}
	waitEvent(t, ctx, control, "asked", regexp.MustCompile("^"+key+"$"))
	records := readEvents(t, ctx, c, d.ts.URL+"/s/"+id+"/events?from=0", "")
	waitEvent(t, ctx, records, "item", regexp.MustCompile(`id="restore-`))
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(d.root, f)); !os.IsNotExist(err) {
			t.Errorf("%s after /rewind 1: %v", f, err)
		}
	}
}

// Claude Code's status line shows on the page as text: its colours and any
// other escape sequence or control character dropped, its markup none.
func TestStatusLineIsText(t *testing.T) {
	var w bytes.Buffer
	out{&w}.status(host.Status{Line: "\x1b[1;31m" + evilScript + "\x1b]52;c;Y2xpcA==\x07\x1b[0m\a"})
	nodes, err := html.ParseFragment(&w, &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, n := range nodes {
		checkTree(t, "status", n, 0)
		text.WriteString(textOf(n))
	}
	if got := text.String(); !strings.HasSuffix(got, " · "+evilScript) || strings.ContainsAny(got, "\x1b\a") || strings.Contains(got, "Y2xp") {
		t.Errorf("the status bar reads %q", got)
	}
}
