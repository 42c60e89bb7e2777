package cli

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dsh web refuses, before it listens, an address beyond loopback without
// --remote: nothing is ever served there in plain HTTP.
func TestWebRefusesPlainBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "example.com:0"} {
		t.Run(addr, func(t *testing.T) {
			var out, errOut webOut
			io := IO{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }, Now: time.Now, Cwd: t.TempDir()}
			err := runWebCmd(t.Context(), io, []string{"--session-dir", t.TempDir(), "--addr", addr})
			if err == nil || !strings.Contains(errOut.String(), "--remote") {
				t.Errorf("err %v, stderr %q", err, errOut.String())
			}
			if strings.Contains(out.String(), "Open ") {
				t.Errorf("a URL was printed: %q", out.String())
			}
		})
	}
}

var (
	webTLSURL   = regexp.MustCompile(`https://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}`)
	fingerprint = regexp.MustCompile(`fingerprint is ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})`)
)

// With --remote dsh web serves HTTPS with a certificate it keeps (0600) beside
// the sessions, and the fingerprint it prints is the one the server presents.
func TestWebRemoteServesTLS(t *testing.T) {
	state := t.TempDir()
	var out, errOut webOut
	io := IO{Out: &out, Err: &errOut, Getenv: func(string) string { return "" }, Now: time.Now, Cwd: t.TempDir()}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- runWebCmd(ctx, io, []string{"--session-dir", filepath.Join(state, "sessions"), "--addr", "127.0.0.1:0", "--remote"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var u string
	for deadline := time.Now().Add(10 * time.Second); u == "" && time.Now().Before(deadline); {
		u = webTLSURL.FindString(out.String())
		time.Sleep(10 * time.Millisecond)
	}
	if u == "" {
		t.Fatalf("no https URL printed; out %q, err %q", out.String(), errOut.String())
	}
	m := fingerprint.FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("no fingerprint printed: %q", errOut.String())
	}
	hostport := strings.TrimPrefix(u[:strings.Index(u, "/?")], "https://")
	conn, err := tls.Dial("tcp", hostport, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // checked by fingerprint
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
	conn.Close()
	if got := strings.ToUpper(hex.EncodeToString(sum[:])); got != strings.ReplaceAll(m[1], ":", "") {
		t.Errorf("served %s, printed %s", got, m[1])
	}
	st, err := os.Stat(filepath.Join(state, "web", "key.pem"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key.pem: %v %v", st, err)
	}
}
