package web

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/dsh-dev/dsh/internal/session"
)

// The attacks: markup that would run script, close the <pre> it sits in, or link
// to javascript:, in every place a session can carry text.
const (
	evilScript = `<script>alert("pwned")</script>`
	evilPre    = `</pre></code></td></table><b id="escaped">bold?</b>`
	evilLink   = `<a href="javascript:alert(1)">click</a>`
	evilImg    = `<img src=x onerror="alert(2)">`
	evil       = evilScript + "\n" + evilPre + "\n" + evilLink + "\n" + evilImg + "\n"
	evilMD     = evil + "\n[md link](javascript:alert(3)) [md2](JaVaScRiPt:alert(4)) [md3](java&#x09;script:alert(5)) " +
		"![img](javascript:alert(6)) <https://ok.example/x?<script>> [ok](https://ok.example/)\n\n" +
		"```html\n" + evilScript + "\n```\n\n`" + evilPre + "`\n"
)

func evilSession(t *testing.T, dir string) *recorder {
	t.Helper()
	r := newRecorder(t, dir, sid)
	r.say(session.TypeUser, evilMD)
	r.say(session.TypeThinking, evilMD)
	r.say(session.TypeAssistant, evilMD)
	r.file("evil.html", evil+strings.Repeat("filler\n", 60)+evil)
	r.file("evil.py", "s = '''\n"+evil+"'''\n")
	r.call("read", map[string]any{"path": "evil.html"})
	r.call("read", map[string]any{"path": "evil.py"})
	r.call("edit", map[string]any{"path": "evil.py", "old_string": evilScript, "new_string": evilLink + evilPre})
	r.call("write", map[string]any{"path": "new.html", "content": evil})
	r.call("bash", map[string]any{"command": "cat evil.html; echo '" + evilPre + "' >&2", "description": evilScript})
	r.call("bash", map[string]any{"command": "printf '%s' '" + evilScript + "'; exit 7"})
	r.call("read", map[string]any{"path": "<script>alert(1)</script>.txt"})
	r.call("todo_write", map[string]any{"todos": []map[string]any{{"content": evil, "status": "in_progress"}}})
	r.call(evilScript, map[string]any{"x": evil})
	r.append(session.Record{Type: session.TypeTurnEnd, StopReason: "error", Error: evil})
	return r
}

// Everything a session holds is shown as text: the page, the unfolded cards and
// the event stream carry no element, attribute or URL that the session's content
// made, and every attack string is visible verbatim.
func TestHostileContentIsText(t *testing.T) {
	dir := t.TempDir()
	r := evilSession(t, dir)
	_, ts := testServer(t, dir)
	c := client(t, ts)

	code, page := get(t, c, ts.URL+"/s/"+sid)
	if code != http.StatusOK {
		t.Fatal(code)
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, "page", doc, 1)
	text := textOf(doc)
	for _, want := range []string{evilScript, evilPre, evilLink, evilImg, "md link", "md2", "md3"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	for _, l := range links(doc) {
		if !strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "https://ok.example/") && !strings.HasPrefix(l, "data:image/") {
			t.Errorf("page link %q", l)
		}
	}

	// Every call's unfolded card.
	for i := 1; i <= r.n; i++ {
		id := fmt.Sprintf("call_%04d", i)
		code, body := get(t, c, ts.URL+"/s/"+sid+"/call/"+id)
		if code != http.StatusOK {
			t.Errorf("%s: %d", id, code)
			continue
		}
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, id, doc, 1)
	}

	// The event stream from the first record on: every fragment.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	events := readEvents(t, ctx, c, ts.URL+"/s/"+sid+"/events?from=1", "")
	var all strings.Builder
	for ev := range events {
		nodes, err := html.ParseFragment(strings.NewReader(ev.data), &html.Node{Type: html.ElementNode, DataAtom: atom.Body, Data: "body"})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			checkTree(t, "event "+ev.id, n, 0)
			all.WriteString(textOf(n))
		}
		if strings.Contains(ev.data, "turn-end") {
			break
		}
	}
	cancel()
	for _, want := range []string{evilScript, evilPre, evilLink, evilImg} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the event stream does not show %q as text", want)
		}
	}
}

// banned are elements no page of ours holds: only session content could make them.
var banned = map[atom.Atom]bool{atom.Style: true, atom.Iframe: true, atom.Object: true, atom.Embed: true,
	atom.Form: true, atom.Base: true, atom.Frame: true, atom.Svg: true, atom.Math: true}

var scheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)

// checkTree fails on anything in n that could run script or load from elsewhere:
// script elements other than the page's own (wantScripts of them, src
// /static/app.js), event-handler or style attributes, style, iframe, object,
// embed, form or base elements, and URLs with a scheme other than http(s),
// mailto or data:image.
func checkTree(t *testing.T, where string, n *html.Node, wantScripts int) {
	t.Helper()
	scripts := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if n.DataAtom == atom.Script {
				scripts++
				if src := attr(n, "src"); src != "/static/app.js" || n.FirstChild != nil {
					t.Errorf("%s: script element src=%q", where, src)
				}
			}
			if banned[n.DataAtom] {
				t.Errorf("%s: <%s> element", where, n.Data)
			}
			if attr(n, "id") == "escaped" {
				t.Errorf("%s: the </pre> attack made an element", where)
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				if strings.HasPrefix(k, "on") || k == "style" || k == "srcdoc" || k == "formaction" {
					t.Errorf("%s: <%s %s=%q>", where, n.Data, a.Key, a.Val)
				}
				if k == "href" || k == "src" || k == "action" || k == "data-src" {
					v := strings.ToLower(strings.Map(func(r rune) rune {
						if r <= ' ' {
							return -1
						}
						return r
					}, a.Val))
					if s := scheme.FindString(v); s != "" && s != "http:" && s != "https:" && s != "mailto:" &&
						!strings.HasPrefix(v, "data:image/png;") && !strings.HasPrefix(v, "data:image/jpeg;") {
						t.Errorf("%s: <%s %s=%q>", where, n.Data, a.Key, a.Val)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	if scripts != wantScripts {
		t.Errorf("%s: %d script elements, want %d", where, scripts, wantScripts)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func links(n *html.Node) []string {
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "href" || a.Key == "src" {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}
