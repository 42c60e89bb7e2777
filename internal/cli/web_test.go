package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/session"
)

// webOut is an io.Writer the test can read while the command writes.
type webOut struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *webOut) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *webOut) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

var webURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}`)

// dsh web prints a loopback URL with a token, serves the sessions there (and
// nothing without the token), and stops when its context is cancelled.
func TestWebServesUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	log, err := session.Create(dir, "20250314-093012-abcdefgh", t.TempDir(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Append(session.Record{Type: session.TypeUser, Text: "hello from the test"}); err != nil {
		t.Fatal(err)
	}
	log.Close()

	var out, errOut webOut
	io := IO{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }, Now: time.Now}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runWebCmd(ctx, io, []string{"--session-dir", dir}) }()

	var u string
	for deadline := time.Now().Add(10 * time.Second); u == "" && time.Now().Before(deadline); {
		u = webURL.FindString(out.String())
		time.Sleep(10 * time.Millisecond)
	}
	if u == "" {
		cancel()
		t.Fatalf("no URL printed; out %q, err %q, returned %v", out.String(), errOut.String(), <-done)
	}
	if errOut.String() != "" {
		t.Errorf("stderr: %q", errOut.String())
	}
	base := u[:strings.Index(u, "/?")]
	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET without the token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := ioReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "hello from the test") {
		t.Errorf("GET %s = %s:\n%s", u, resp.Status, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("dsh web returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dsh web did not stop after cancel")
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("the server still answers after the command returned")
	}
}

func TestWebRejectsArguments(t *testing.T) {
	var out, errOut webOut
	io := IO{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }, Now: time.Now}
	if err := runWebCmd(t.Context(), io, []string{"extra"}); !errors.Is(err, errUsage) {
		t.Errorf("runWebCmd(extra) = %v, want a usage error", err)
	}
	if err := runWebCmd(t.Context(), io, []string{"--addr", "256.0.0.1:x"}); err == nil {
		t.Error("a bad --addr was accepted")
	}
}

func ioReadAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}
