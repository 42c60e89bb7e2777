package web

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

const sid = "20250314-093012-abcdefgh"

// Every route refuses a request without the token, or with a wrong one.
func TestTokenRequired(t *testing.T) {
	dir := t.TempDir()
	everyCard(newRecorder(t, dir, sid))
	_, ts := testServer(t, dir)
	paths := []string{"/", "/s/" + sid, "/s/" + sid + "/events", "/s/" + sid + "/call/call_0001",
		"/static/app.js", "/static/style.css", "/static/chroma.css", "/nope"}
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range paths {
		for _, tok := range []string{"", "?token=wrong", "?token=" + testToken[:len(testToken)-1]} {
			resp, err := anon.Get(ts.URL + p + tok)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s%s = %s, want 403", p, tok, resp.Status)
			}
			checkHeaders(t, p, resp.Header)
		}
		req, _ := http.NewRequest("GET", ts.URL+p, nil)
		req.AddCookie(&http.Cookie{Name: "dsh-000000000000", Value: testToken})
		req.AddCookie(&http.Cookie{Name: "token", Value: testToken})
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s with the token in a cookie of another name = %s, want 403", p, resp.Status)
		}
	}
}

// The token in the URL sets an HttpOnly, SameSite=Strict cookie and redirects to
// the same page without it; the cookie then opens every route.
func TestTokenBecomesCookie(t *testing.T) {
	dir := t.TempDir()
	everyCard(newRecorder(t, dir, sid))
	_, ts := testServer(t, dir)
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := anon.Get(ts.URL + "/s/" + sid + "?token=" + url.QueryEscape(testToken) + "&x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/s/"+sid+"?x=1" {
		t.Fatalf("GET with token = %s, Location %q; want 303 to /s/%s?x=1", resp.Status, resp.Header.Get("Location"), sid)
	}
	cs := resp.Cookies()
	if len(cs) != 1 || cs[0].Value != testToken || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Path != "/" {
		t.Fatalf("cookies = %+v, want one HttpOnly SameSite=Strict cookie holding the token", cs)
	}
	for _, p := range []string{"/", "/s/" + sid, "/s/" + sid + "/call/call_0001", "/static/app.js", "/static/chroma.css"} {
		req, _ := http.NewRequest("GET", ts.URL+p, nil)
		req.AddCookie(cs[0])
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with the cookie = %s", p, resp.Status)
		}
		checkHeaders(t, p, resp.Header)
	}
}

func checkHeaders(t *testing.T, p string, h http.Header) {
	t.Helper()
	c := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:"} {
		if !strings.Contains(c, want) {
			t.Errorf("%s: CSP %q lacks %q", p, c, want)
		}
	}
	if strings.Contains(c, "unsafe-inline") || strings.Contains(c, "unsafe-eval") {
		t.Errorf("%s: CSP %q allows inline script", p, c)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("%s: headers %v", p, h)
	}
}

// Session ids are validated: nothing but a log in the session directory is served,
// however the path is spelled.
func TestTraversalRefused(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	everyCard(newRecorder(t, dir, sid))
	// A log outside the session directory, and a non-log file, that must stay unreachable.
	outside := newRecorder(t, root, "20250101-000000-outside")
	outside.say(session.TypeUser, "SECRET-OUTSIDE")
	if err := os.WriteFile(filepath.Join(root, "passwd"), []byte("SECRET-PASSWD"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ts := testServer(t, dir)
	c := client(t, ts)
	c.Timeout = 3 * time.Second // a leaked event stream would never end
	abs := url.PathEscape(filepath.Join(root, "20250101-000000-outside.jsonl"))
	for _, p := range []string{
		"/s/..%2f20250101-000000-outside",
		"/s/..%2f20250101-000000-outside.jsonl",
		"/s/..%2F..%2Fpasswd",
		"/s/%2e%2e%2fpasswd",
		"/s/..%5cpasswd",
		"/s/" + abs,
		"/s/" + abs + "/events",
		"/s/" + abs + "/call/call_0001",
		"/s/..%2f20250101-000000-outside/events",
		"/s/..%2f20250101-000000-outside/call/call_0001",
		"/s/" + sid + ".jsonl",
		"/s/-" + sid,
		"/s/" + strings.ToUpper(sid),
		"/s/%00",
		"/s/" + sid + "/call/..%2f..%2fpasswd",
		"/s/" + sid + "/call/nope",
		"/s/nope",
		"/static/..%2fweb.go",
		"/static/%2e%2e%2ftemplates%2fpages.html",
		"/static/",
	} {
		resp, err := c.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body) // up to the timeout
		resp.Body.Close()
		code, body := resp.StatusCode, string(b)
		if code == http.StatusOK {
			t.Errorf("GET %s = 200, want a refusal", p)
		}
		if strings.Contains(body, "SECRET") {
			t.Errorf("GET %s leaked: %q", p, body)
		}
	}
	// The unescaped spellings are cleaned by the router before they reach a handler.
	for _, p := range []string{"/s/../passwd", "/s/./../passwd", "/static/../web.go"} {
		req := httptest.NewRequest("GET", p, nil)
		req.AddCookie(&http.Cookie{Name: srvCookie(t, dir), Value: testToken})
		w := httptest.NewRecorder()
		s, _ := testServer(t, dir)
		s.ServeHTTP(w, req)
		if w.Code == http.StatusOK || strings.Contains(w.Body.String(), "SECRET") {
			t.Errorf("GET %s = %d %q", p, w.Code, w.Body.String())
		}
	}
	// A unique prefix of an id is resolved within the directory.
	if code, body := get(t, c, ts.URL+"/s/"+sid[:16]); code != http.StatusOK || !strings.Contains(body, sid) {
		t.Errorf("GET /s/<prefix> = %d", code)
	}
}

func srvCookie(t *testing.T, dir string) string {
	s, _ := testServer(t, dir)
	return s.cookie
}

// The list shows every session, newest first, with its directory, first prompt
// and state.
func TestList(t *testing.T) {
	dir := t.TempDir()
	older := newRecorder(t, dir, "20250101-000000-older000")
	older.say(session.TypeUser, "the older <prompt>")
	older.log.Close()
	newer := newRecorder(t, dir, "20250314-093012-newer000")
	newer.say(session.TypeUser, "the newer prompt\nsecond line")
	_, ts := testServer(t, dir)
	code, body := get(t, client(t, ts), ts.URL+"/")
	if code != http.StatusOK {
		t.Fatal(code)
	}
	i, j := strings.Index(body, "newer000"), strings.Index(body, "older000")
	if i < 0 || j < 0 || i > j {
		t.Errorf("sessions not listed newest first:\n%s", body)
	}
	for _, want := range []string{"the older &lt;prompt&gt;", "the newer prompt …", `<span class="badge state running">running</span>`,
		`<span class="badge state interrupted">interrupted</span>`, `<code>` + older.root + `</code>`, `href="/s/20250101-000000-older000"`} {
		if !strings.Contains(body, want) {
			t.Errorf("list lacks %s:\n%s", want, body)
		}
	}
}

// Each session shows where it stands, on the list and on its page: running
// while a dsh holds its log (and only then does the page follow it), else how
// its last turn ended — finished, failed with the error, cancelled — or
// interrupted when a prompt's turn never ended.
func TestSessionState(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		id, want, err string
		recs          []session.Record
		keepOpen      bool
	}{
		{id: "20250101-000000-finished", want: "finished", recs: []session.Record{
			{Type: session.TypeUser, Text: "a"}, {Type: session.TypeTurnEnd, StopReason: "end_turn"},
			{Type: session.TypeModel, Model: "m"}}},
		{id: "20250101-000000-failed00", want: "failed", err: "provider: 529 <overloaded>", recs: []session.Record{
			{Type: session.TypeUser, Text: "a"}, {Type: session.TypeTurnEnd, StopReason: "end_turn"},
			{Type: session.TypeUser, Text: "b"}, {Type: session.TypeTurnEnd, StopReason: "error", Error: "provider: 529 <overloaded>"}}},
		{id: "20250101-000000-cancel00", want: "cancelled", recs: []session.Record{
			{Type: session.TypeUser, Text: "a"}, {Type: session.TypeTurnEnd, StopReason: "cancelled"}}},
		{id: "20250101-000000-killed00", want: "interrupted", recs: []session.Record{
			{Type: session.TypeUser, Text: "a"}, {Type: session.TypeTurnEnd, StopReason: "error", Error: "x"},
			{Type: session.TypeUser, Text: "b"}, {Type: session.TypeAssistant, Text: strings.Repeat("long ", 20000)}}},
		{id: "20250101-000000-running0", want: "running", keepOpen: true, recs: []session.Record{
			{Type: session.TypeUser, Text: "a"}, {Type: session.TypeTurnEnd, StopReason: "cancelled"}}},
	}
	for _, c := range cases {
		log, err := session.Create(dir, c.id, t.TempDir(), session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.recs {
			if err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if c.keepOpen {
			defer log.Close()
		} else {
			log.Close()
		}
	}
	_, ts := testServer(t, dir)
	cl := client(t, ts)
	_, list := get(t, cl, ts.URL+"/")
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			badge := `<span class="badge state ` + c.want + `">` + c.want + `</span>`
			row := list[strings.Index(list, `data-session="`+c.id):]
			row = row[:strings.Index(row, "</tr>")]
			if !strings.Contains(row, badge) {
				t.Errorf("list row lacks %s:\n%s", badge, row)
			}
			_, page := get(t, cl, ts.URL+"/s/"+c.id)
			if !strings.Contains(page, badge) {
				t.Errorf("page lacks %s:\n%s", badge, page)
			}
			follows := strings.Contains(page, "data-events=") || strings.Contains(page, `id="conn"`)
			if follows != c.keepOpen {
				t.Errorf("page follows the log = %v, want %v", follows, c.keepOpen)
			}
			if c.err != "" {
				esc := html.EscapeString(c.err)
				if !strings.Contains(row, `<span class="state-error">`+strings.ReplaceAll(esc, "&#34;", "&#34;")+`</span>`) ||
					!strings.Contains(page, `<pre class="error state-error">`+esc+`</pre>`) {
					t.Errorf("the error %q is not shown:\n%s\n%s", c.err, row, page)
				}
			}
		})
	}
}

// A todo update shows once: as the todo_write card, not again from the plan
// record the agent logs after it (the terminal shows it so too).
func TestTodoShownOnce(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	r.call("todo_write", map[string]any{"todos": []map[string]any{
		{"content": "Fix the greeting", "status": "in_progress"}, {"content": "Add a changelog", "status": "pending"}}})
	_, ts := testServer(t, dir)
	_, page := get(t, client(t, ts), ts.URL+"/s/"+sid)
	if n := strings.Count(page, "Add a changelog"); n != 1 || !strings.Contains(page, `data-tool="todo_write"`) {
		t.Errorf("the todo list shows %d times:\n%s", n, page)
	}
}

// A folded body's expand control loads the whole card, which has every line.
func TestFoldedBodyLoadsWhole(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	id, _ := r.call("bash", map[string]any{"command": "seq 1 500"})
	_, ts := testServer(t, dir)
	c := client(t, ts)
	_, page := get(t, c, ts.URL+"/s/"+sid)
	src := "/s/" + sid + "/call/" + id
	if !strings.Contains(page, `data-src="`+src+`"`) || !strings.Contains(page, "470 more lines") {
		t.Fatalf("the page does not fold the output:\n%s", page)
	}
	if strings.Contains(page, "\n250\n") {
		t.Error("the folded page holds a hidden line")
	}
	code, whole := get(t, c, ts.URL+src)
	if code != http.StatusOK {
		t.Fatal(code)
	}
	var want strings.Builder
	for i := 1; i <= 500; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if !strings.Contains(whole, `id="c-`+id+`"`) || !strings.Contains(whole, strings.TrimSuffix(want.String(), "\n")) ||
		strings.Contains(whole, "more lines") {
		t.Errorf("the whole card lacks lines or is folded:\n%s", whole)
	}
}

// A call id is the model's: one with a slash, a space and URL syntax still gets
// an element id and an expand link that finds it.
func TestOddCallID(t *testing.T) {
	dir := t.TempDir()
	r := newRecorder(t, dir, sid)
	const odd = "toolu 01/x?y#z%2f"
	args := []byte(`{"command":"seq 1 100"}`)
	res := res(r.reg.Run(t.Context(), tool.Env{Session: r.tools}, "bash", args, nil))
	r.append(session.Record{Type: session.TypeToolCall, CallID: odd, Name: "bash", Args: args})
	r.append(session.Record{Type: session.TypeToolResult, CallID: odd, Result: &res})
	_, ts := testServer(t, dir)
	c := client(t, ts)
	_, page := get(t, c, ts.URL+"/s/"+sid)
	m := regexp.MustCompile(`data-src="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no expand link:\n%s", page)
	}
	src := html.UnescapeString(m[1])
	if src != "/s/"+sid+"/call/"+url.PathEscape(odd) {
		t.Errorf("expand link %q", src)
	}
	code, whole := get(t, c, ts.URL+src)
	if code != http.StatusOK || !strings.Contains(whole, "\n50\n") || !strings.Contains(whole, `id="`+callElemID(odd)+`"`) {
		t.Errorf("GET %s = %d:\n%s", src, code, whole)
	}
}

// A presenter that panics spoils only its own item, not the page or the server.
func TestPresenterPanic(t *testing.T) {
	dir := t.TempDir()
	log, err := session.Create(dir, sid, t.TempDir(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range []session.Record{
		{Type: session.TypeUser, Text: "before"},
		{Type: session.TypeToolCall, CallID: "c1", Name: "boom", Args: []byte(`{}`)},
		{Type: session.TypeToolResult, CallID: "c1", Result: &tool.Result{Content: []card.Content{card.Text("x")}}},
		{Type: session.TypeAssistant, Text: "after"},
	} {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	boom := tool.New(tool.Spec[struct{}, tool.NoMeta]{
		Name: "boom", Description: "panics when presented",
		Execute: func(context.Context, tool.Env, struct{}, *tool.NoMeta) (tool.Result, *tool.NoMeta, error) {
			return tool.Text("x"), nil, nil
		},
		PresentCall:   func(struct{}, *tool.NoMeta) card.Call { return &card.GenericCall{Title: "boom"} },
		PresentResult: func(struct{}, tool.Result, *tool.NoMeta) card.Result { panic("presenter bug") },
	})
	s, err := New(Options{Dir: dir, Token: testToken, Registry: tool.NewRegistry(boom), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	code, page := get(t, client(t, ts), ts.URL+"/s/"+sid)
	if code != http.StatusOK || !strings.Contains(page, "before") || !strings.Contains(page, "after") ||
		!strings.Contains(page, `<span class="title">boom</span>`) || !strings.Contains(page, `<pre>x</pre>`) || !strings.Contains(page, `<footer id="end">`) {
		t.Errorf("GET = %d:\n%s", code, page)
	}
}

// A subagent's session is listed under its parent's, marked with its agent,
// not as a session of its own among the others.
func TestListNestsChildren(t *testing.T) {
	dir := t.TempDir()
	mk := func(id, prompt string, parent *session.Parent) {
		log, err := session.Create(dir, id, t.TempDir(), session.Options{Parent: parent})
		if err != nil {
			t.Fatal(err)
		}
		if err := log.Append(session.Record{Type: session.TypeUser, Text: prompt}); err != nil {
			t.Fatal(err)
		}
		log.Close()
	}
	mk("20250101-000000-parent00", "the parent's prompt", nil)
	mk("20250102-000000-other000", "another session", nil)
	mk("20250103-000000-child000", "the subagent's task", &session.Parent{Session: "20250101-000000-parent00", CallID: "t1", Agent: "explore"})
	_, ts := testServer(t, dir)
	_, body := get(t, client(t, ts), ts.URL+"/")
	other, parent, child := strings.Index(body, "other000"), strings.Index(body, "parent00\""), strings.Index(body, `class="child" data-session="20250103-000000-child000"`)
	if other < 0 || parent < 0 || child < 0 || other > parent || parent > child {
		t.Errorf("the child should follow its parent, the others newest first:\n%s", body)
	}
	if !strings.Contains(body, "↳ explore: the subagent&#39;s task") && !strings.Contains(body, "↳ explore: the subagent's task") {
		t.Errorf("the child row names its agent:\n%s", body)
	}
}
