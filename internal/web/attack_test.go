package web

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serveDriven serves d's server the way dsh web does (Serve: the Host checked)
// on a loopback port, plain or over TLS, and returns its base URL.
func serveDriven(t *testing.T, d *driven, cert *tls.Certificate) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	if cert != nil {
		ln = TLSListener(ln, *cert)
		base = "https://" + ln.Addr().String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, d.srv) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return base
}

// Every state-changing request is refused unless it carries the token's cookie
// and comes from the page's own origin at the server's own Host; a body over
// the bound and a directory outside the chosen ones are refused too. Only the
// requests that pass open a session.
func TestDriveAttacks(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "ok"}]}`)
	base := serveDriven(t, d, nil)
	u, _ := url.Parse(base)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(d.root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.root, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(d.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cookieName := d.srv.cookie
	good := &http.Cookie{Name: cookieName, Value: testToken}
	body := `{"dir": ` + quote(d.root) + `}`
	tests := []struct {
		name    string
		path    string // default /new
		host    string // default the server's
		cookie  *http.Cookie
		headers map[string]string
		body    string
		want    int
	}{
		{name: "from the page", cookie: good, headers: map[string]string{"Origin": base}, want: 200},
		{name: "same-origin fetch without Origin", cookie: good, headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, want: 200},
		{name: "a directory inside the root", cookie: good, headers: map[string]string{"Origin": base},
			body: `{"dir": ` + quote(filepath.Join(d.root, "sub")) + `}`, want: 200},
		{name: "no cookie", headers: map[string]string{"Origin": base}, want: 403},
		{name: "wrong token", cookie: &http.Cookie{Name: cookieName, Value: "wrong-token-0123456789abcdef"}, headers: map[string]string{"Origin": base}, want: 403},
		{name: "token in the URL, no cookie", path: "/new?token=" + testToken, headers: map[string]string{"Origin": base}, want: 403},
		{name: "token in the URL beside the cookie", path: "/new?token=" + testToken, cookie: good, headers: map[string]string{"Origin": base}, want: 403},
		{name: "CSRF: another origin", cookie: good, headers: map[string]string{"Origin": "http://evil.example"}, want: 403},
		{name: "CSRF: another port", cookie: good, headers: map[string]string{"Origin": "http://127.0.0.1:1"}, want: 403},
		{name: "CSRF: https origin for an http server", cookie: good, headers: map[string]string{"Origin": "https://" + u.Host}, want: 403},
		{name: "CSRF: null origin", cookie: good, headers: map[string]string{"Origin": "null"}, want: 403},
		{name: "CSRF: cross-site without Origin", cookie: good, headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "CSRF: same-site without Origin", cookie: good, headers: map[string]string{"Sec-Fetch-Site": "same-site"}, want: 403},
		{name: "neither Origin nor Sec-Fetch-Site", cookie: good, want: 403},
		{name: "DNS rebinding: a foreign Host", host: "evil.example:" + u.Port(), cookie: good,
			headers: map[string]string{"Origin": "http://evil.example:" + u.Port()}, want: 421},
		{name: "a body too large", cookie: good, headers: map[string]string{"Origin": base},
			body: `{"dir": ` + quote(d.root) + `, "pad": "` + strings.Repeat("x", 2<<20) + `"}`, want: 413},
		{name: "a directory outside", cookie: good, headers: map[string]string{"Origin": base}, body: `{"dir": ` + quote(outside) + `}`, want: 403},
		{name: "a directory out through ..", cookie: good, headers: map[string]string{"Origin": base},
			body: `{"dir": ` + quote(d.root+"/sub/../..") + `}`, want: 403},
		{name: "a directory out through a symlink", cookie: good, headers: map[string]string{"Origin": base},
			body: `{"dir": ` + quote(filepath.Join(d.root, "escape")) + `}`, want: 403},
		{name: "a relative directory", cookie: good, headers: map[string]string{"Origin": base}, body: `{"dir": "sub"}`, want: 403},
		{name: "a file", cookie: good, headers: map[string]string{"Origin": base}, body: `{"dir": ` + quote(filepath.Join(d.root, "file")) + `}`, want: 403},
		{name: "CSRF: delete from another origin", path: "/s/20250314-093012-abcdefgh/delete", cookie: good,
			headers: map[string]string{"Origin": "http://evil.example"}, want: 403},
		{name: "CSRF: cancel from another site", path: "/s/20250314-093012-abcdefgh/cancel", cookie: good,
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "CSRF: an answer from another origin", path: "/s/20250314-093012-abcdefgh/answer/a1", cookie: good,
			headers: map[string]string{"Origin": "http://evil.example"}, body: `{"decision": "allow_always"}`, want: 403},
		{name: "a form post from another origin", cookie: good,
			headers: map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, body: "dir=/", want: 403},
		{name: "input to a session not driven", path: "/s/20250314-093012-abcdefgh/input", cookie: good,
			headers: map[string]string{"Origin": base}, body: `{"text": "rm -rf"}`, want: 404},
		{name: "an answer to a session not driven", path: "/s/20250314-093012-abcdefgh/answer/a1", cookie: good,
			headers: map[string]string{"Origin": base}, body: `{"decision": "allow_always"}`, want: 404},
	}
	wantOpened := int32(0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.body
			if b == "" {
				b = body
			}
			req, err := http.NewRequest(http.MethodPost, base+cmpOr(tt.path, "/new"), strings.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json") // a header below may set another
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.cookie != nil {
				req.AddCookie(tt.cookie)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.want, msg)
			}
		})
		if tt.want == 200 {
			wantOpened++
		}
	}
	if n := d.opened.Load(); n != wantOpened {
		t.Errorf("%d sessions opened, want %d (only the allowed requests)", n, wantOpened)
	}
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var fingerprintRE = regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`)

// The token's cookie is HttpOnly (no script reads it), SameSite=Strict (no
// other site's request carries it) and, over HTTPS, Secure.
func TestCookieFlags(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "ok"}]}`)
	cert, _, err := Certificate(t.TempDir(), []string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		cert   *tls.Certificate
		secure bool
	}{{"http", nil, false}, {"https", &cert, true}} {
		t.Run(tt.name, func(t *testing.T) {
			base := serveDriven(t, d, tt.cert)
			c := &http.Client{
				Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the test's own certificate
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}
			resp, err := c.Get(base + "/?token=" + testToken)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			cs := resp.Cookies()
			if len(cs) != 1 {
				t.Fatalf("cookies %v", cs)
			}
			ck := cs[0]
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure != tt.secure || ck.Path != "/" {
				t.Errorf("cookie %s: HttpOnly %v SameSite %v Secure %v Path %q", resp.Header.Get("Set-Cookie"), ck.HttpOnly, ck.SameSite, ck.Secure, ck.Path)
			}
			if loc := resp.Header.Get("Location"); strings.Contains(loc, "token") {
				t.Errorf("redirected to %q, which keeps the token", loc)
			}
		})
	}
}

// The certificate dsh makes is kept 0600 and reused; the fingerprint it
// reports is the one the server presents; plain HTTP on the TLS port gets an
// error, never the page.
func TestTLS(t *testing.T) {
	d := driveServer(t, `{"turns": [{"text": "ok"}]}`)
	dir := filepath.Join(t.TempDir(), "web")
	now := time.Now()
	cert, fp, err := Certificate(dir, []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cert.pem", "key.pem"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", f, st.Mode().Perm())
		}
	}
	if _, again, err := Certificate(dir, []string{"127.0.0.1"}, now); err != nil || again != fp {
		t.Errorf("the kept certificate was not reused: %s, then %s (%v)", fp, again, err)
	}
	if _, other, err := Certificate(dir, []string{"10.1.2.3"}, now); err != nil || other == fp {
		t.Errorf("a certificate for other names was reused (%v)", err)
	}
	cert, fp, err = Certificate(dir, []string{"127.0.0.1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	base := serveDriven(t, d, &cert)

	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // checked by fingerprint below
	if err != nil {
		t.Fatal(err)
	}
	served := Fingerprint(conn.ConnectionState().PeerCertificates[0].Raw)
	conn.Close()
	if served != fp || !fingerprintRE.MatchString(fp) {
		t.Errorf("served %s, reported %s", served, fp)
	}

	plain := "http://" + strings.TrimPrefix(base, "https://")
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(plain + "/?token=" + testToken)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "dsh") || len(resp.Cookies()) > 0 {
			t.Errorf("plain HTTP on the TLS port: %s %q", resp.Status, b)
		}
	}
}
