package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// run is one web_fetch call as the agent makes it: preview, then run.
func run(t *testing.T, tl tool.Tool, p Params) tool.Result {
	t.Helper()
	args, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	pv, fail := tl.Preview(t.Context(), tool.Env{}, args)
	if fail != nil {
		return *fail
	}
	r, err := tl.Run(t.Context(), tool.Env{}, args, pv)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTMLBecomesMarkdown(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		fmt.Fprint(w, "<html><head><title>T</title><script>alert('x')</script><style>p{}</style></head>"+
			"<body><h1>Caf\xe9</h1><p>See <a href=\"/docs\">the docs</a>.</p><ul><li>one</li></ul></body></html>")
	})
	tl := Tool()
	r := run(t, tl, Params{URL: srv.URL + "/page#frag", Prompt: "the docs link"})
	if r.IsError {
		t.Fatalf("error: %s", r.TextOf())
	}
	text := r.TextOf()
	for _, want := range []string{"# Café", "[the docs](" + srv.URL + "/docs)", "- one", "Looking for: the docs link", "HTTP 200, text/html"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"alert", "p{}", "frag"} {
		if strings.Contains(text, bad) {
			t.Errorf("result holds %q:\n%s", bad, text)
		}
	}
	args, _ := json.Marshal(Params{URL: srv.URL + "/page"})
	call, ok := tl.PresentCall(args, nil).(*card.GenericCall)
	if !ok || call.Title != srv.URL+"/page" || call.ToolKind != "fetch" {
		t.Errorf("call card = %#v", tl.PresentCall(args, nil))
	}
	res, ok := tl.PresentResult(args, r).(*card.GenericResult)
	if !ok || res.Title != srv.URL+"/page" || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, "# Café") {
		t.Errorf("result card = %#v", tl.PresentResult(args, r))
	}
}

func TestTextTypes(t *testing.T) {
	for _, tc := range []struct {
		ct, body, want string
		isErr          bool
	}{
		{"application/json", `{"a":1}`, `{"a":1}`, false},
		{"text/plain; charset=utf-8", "plain *text*", "plain *text*", false},
		{"", "no type given", "no type given", false},
		{"image/png", "\x89PNG\r\n\x1a\n....", "it is image/png, not text", true},
		{"application/octet-stream", "\x00\x01", "not text", true},
	} {
		srv := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			if tc.ct != "" {
				w.Header().Set("Content-Type", tc.ct)
			}
			fmt.Fprint(w, tc.body)
		})
		r := run(t, Tool(), Params{URL: srv.URL})
		if r.IsError != tc.isErr || !strings.Contains(r.TextOf(), tc.want) {
			t.Errorf("%q: error %v, %q; want error %v and %q", tc.ct, r.IsError, r.TextOf(), tc.isErr, tc.want)
		}
	}
}

func TestHTTPErrorStatus(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no such page", http.StatusNotFound) })
	r := run(t, Tool(), Params{URL: srv.URL + "/missing"})
	if !r.IsError || !strings.Contains(r.TextOf(), "HTTP 404") || !strings.Contains(r.TextOf(), "no such page") {
		t.Errorf("404 gave error %v: %q", r.IsError, r.TextOf())
	}
}

// Only http and https, refused before anyone is asked.
func TestSchemesRefused(t *testing.T) {
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/x", "gopher://example.com", "javascript:alert(1)",
		"data:text/plain,hi", "localhost:8080/x", "//example.com/x", "/etc/passwd", "http://", "http://user:pw@example.com/"} {
		args, _ := json.Marshal(Params{URL: u})
		_, fail := Tool().Preview(t.Context(), tool.Env{}, args)
		if fail == nil || !fail.IsError {
			t.Errorf("%q was not refused", u)
		}
		if ap := Tool().Approval(args); len(ap.Keys) != 0 || ap.Remember {
			t.Errorf("%q: approval %+v", u, ap)
		}
	}
}

func TestApprovalIsPerHost(t *testing.T) {
	for _, tc := range []struct{ url, key string }{
		{"http://Example.COM/a", "fetch:example.com"},
		{"https://example.com:443/b?q", "fetch:example.com"},
		{"http://example.com:80", "fetch:example.com"},
		{"https://example.com:8443/", "fetch:example.com:8443"},
		{"http://127.0.0.1:5000/x", "fetch:127.0.0.1:5000"},
		{"http://[::1]:5000/x", "fetch:[::1]:5000"},
	} {
		args, _ := json.Marshal(Params{URL: tc.url})
		ap := Tool().Approval(args)
		host := strings.TrimPrefix(tc.key, "fetch:")
		if len(ap.Keys) != 1 || ap.Keys[0] != tc.key || ap.Label != "fetching from "+host || !ap.Remember || ap.Safe {
			t.Errorf("%s: %+v, want key %s", tc.url, ap, tc.key)
		}
	}
}

func TestRedirects(t *testing.T) {
	var other atomic.Int32
	far := serve(t, func(w http.ResponseWriter, _ *http.Request) { other.Add(1); fmt.Fprint(w, "far") })
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop":
			http.Redirect(w, r, "/loop2", http.StatusFound)
		case "/loop2":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		case "/final":
			fmt.Fprint(w, "arrived")
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/away":
			http.Redirect(w, r, far.URL+"/there", http.StatusFound)
		}
	})
	tl := New(Options{MaxRedirects: 3})
	if r := run(t, tl, Params{URL: srv.URL + "/hop"}); r.IsError || !strings.Contains(r.TextOf(), "arrived") ||
		!strings.Contains(r.TextOf(), srv.URL+"/final (HTTP 200") {
		t.Errorf("same-host redirect: %q", r.TextOf())
	}
	if r := run(t, tl, Params{URL: srv.URL + "/loop"}); !r.IsError || !strings.Contains(r.TextOf(), "stopped after 3 redirects") {
		t.Errorf("redirect loop: %q", r.TextOf())
	}
	if r := run(t, tl, Params{URL: srv.URL + "/file"}); !r.IsError || !strings.Contains(r.TextOf(), "refused a redirect") || strings.Contains(r.TextOf(), "root:") {
		t.Errorf("redirect to file://: %q", r.TextOf())
	}
	r := run(t, tl, Params{URL: srv.URL + "/away"})
	if r.IsError || !strings.Contains(r.TextOf(), "redirects to another host: "+far.URL+"/there") || other.Load() != 0 {
		t.Errorf("cross-host redirect: %q, the other host was asked %d times", r.TextOf(), other.Load())
	}
}

func TestHugeBodyIsCut(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("a", 1<<16)
		for range 256 { // 16 MiB, unless the client hangs up first
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	})
	r := run(t, New(Options{MaxBytes: 100_000, MaxChars: 50_000}), Params{URL: srv.URL})
	text := r.TextOf()
	if r.IsError || !strings.Contains(text, "The page was cut") || strings.Count(text, "a") < 50_000 || len(text) > 50_500 {
		t.Errorf("huge body: error %v, %d bytes returned", r.IsError, len(text))
	}
	var m Meta
	if err := json.Unmarshal(r.Meta, &m); err != nil || !m.Truncated {
		t.Errorf("meta %s: want truncated", r.Meta)
	}
}

func TestSlowServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "the start")
		w.(http.Flusher).Flush()
		select { // never finishes the body on its own
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handler
	r := run(t, New(Options{Timeout: 100 * time.Millisecond}), Params{URL: srv.URL + "/body"})
	if !r.IsError || !strings.Contains(r.TextOf(), "took longer than 100ms") {
		t.Errorf("slow body: %q", r.TextOf())
	}

	stall := serve(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	r = run(t, New(Options{Timeout: 100 * time.Millisecond}), Params{URL: stall.URL})
	if !r.IsError || !strings.Contains(r.TextOf(), "took longer than 100ms") {
		t.Errorf("no headers: %q", r.TextOf())
	}
}

// A cancelled turn stops the fetch.
func TestCancel(t *testing.T) {
	srv := serve(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(t.Context())
	args, _ := json.Marshal(Params{URL: srv.URL})
	tl := Tool()
	pv, _ := tl.Preview(ctx, tool.Env{}, args)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	r, err := tl.Run(ctx, tool.Env{}, args, pv)
	if err != nil || !r.IsError || !strings.Contains(r.TextOf(), "canceled") {
		t.Errorf("cancelled fetch: %v, %q", err, r.TextOf())
	}
}
