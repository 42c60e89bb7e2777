package control

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
)

func TestCheckPeer(t *testing.T) {
	me := os.Getuid()
	for _, tc := range []struct {
		name string
		peer int
		ok   bool
	}{
		{"the same user", me, true},
		{"another user", me + 1, false},
		{"root, to a user's session", 0, me == 0},
		{"no user", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPeer(tc.peer, me)
			if (err == nil) != tc.ok {
				t.Errorf("CheckPeer(%d, %d) = %v, want ok=%v", tc.peer, me, err, tc.ok)
			}
		})
	}
}

// TestSocketDirRefused: a socket directory that is a link, or that others
// may enter, is refused rather than used.
func TestSocketDirRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{"a link to a directory", func(t *testing.T, dir string) {
			other := t.TempDir()
			if err := os.Symlink(other, dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"open to others", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", func(t *testing.T, dir string) { writeFile(t, dir, "x") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "live")
			tc.make(t, dir)
			if d, err := openDir(dir, true); err == nil {
				_ = d.Close()
				t.Fatalf("openDir accepted %s", tc.name)
			}
		})
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPlantedAtSocketPath: whatever is found where the socket goes — a link
// to another file, a file — is removed, never followed; the target is left
// as it was and the path is a 0600 socket.
func TestPlantedAtSocketPath(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path, target string)
	}{
		{"a link", func(t *testing.T, path, target string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a dangling link", func(t *testing.T, path, _ string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere"), path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", func(t *testing.T, path, _ string) { writeFile(t, path, "planted") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "live")
			target := filepath.Join(t.TempDir(), "precious")
			writeFile(t, target, "keep me")
			d, err := openDir(dir, true)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d.Close() }()
			path := filepath.Join(dir, "s.sock")
			tc.plant(t, path, target)
			ln, err := listen(d, "s.sock")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ln.Close() }()
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
				t.Errorf("socket path: %v %v, want a 0600 socket", fi.Mode(), err)
			}
			if b, err := os.ReadFile(target); err != nil || string(b) != "keep me" {
				t.Errorf("the link's target became %q (%v)", b, err)
			}
		})
	}
}

// TestStaleSocketReplacedLiveOneKept: a socket no process answers on is
// replaced; one that answers is another dsh's, and refused.
func TestStaleSocketReplacedLiveOneKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "live")
	d, err := openDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	first, err := listen(d, "s.sock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listen(d, "s.sock"); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("a second listener on a live socket: %v, want refused", err)
	}
	_ = first.Close() // leaves the file: a process that died
	again, err := listen(d, "s.sock")
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	_ = again.Close()
}

// raw connects to s's socket without the client, reading past the hello and
// the records so far.
func raw(t *testing.T, dir, id string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := dialIn(t.Context(), Dir(dir), id+sockExt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	br := bufio.NewReader(c)
	for {
		m := readMsg(t, br)
		if m.Type == MsgCaughtUp {
			return c, br
		}
	}
}

func readMsg(t *testing.T, br *bufio.Reader) Message {
	t.Helper()
	line, err := readLine(br, MaxMessage)
	if err != nil {
		t.Fatalf("read a message: %v", err)
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("a message that does not decode: %v\n%s", err, line)
	}
	return m
}

// nextReply skips events to the next reply.
func nextReply(t *testing.T, br *bufio.Reader) Message {
	t.Helper()
	for {
		if m := readMsg(t, br); m.Type == MsgReply {
			return m
		}
	}
}

// TestGarbageAndHugeRequests: a line that is not a request is answered with
// an error and the connection goes on; a line over the bound closes it; the
// session is unharmed either way.
func TestGarbageAndHugeRequests(t *testing.T) {
	s, dir := live(t, askOnce)
	c, br := raw(t, dir, s.ID())
	for _, line := range []string{
		"not json",
		`{"id": "1", "op": "launch"}`,
		`{"op": "cancel"}`,
		`{"id": "2", "op": "cancel", "from": "we b\u001b["}`,
		`{"id": "3", "op": "cancel", "extra": true}`,
		`{"id": "4", "op": "rename", "title": "two\nlines"}`,
		`{"id": "5", "op": "permission", "waiting": "w999", "decision": "allow"}`,
		`[1, 2, 3]`,
		"\x00\xff\xfe",
	} {
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		if m := nextReply(t, br); m.OK || m.Error == "" {
			t.Errorf("%q: reply %+v, want an error", line, m)
		}
	}
	if _, err := c.Write([]byte(`{"id": "ok", "op": "rename", "title": "still fine"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if m := nextReply(t, br); !m.OK || m.ID != "ok" {
		t.Errorf("a good request after garbage: %+v", m)
	}

	huge := bytes.Repeat([]byte("a"), MaxRequest+256<<10)
	go func() { _, _ = c.Write(huge) }() // the server stops reading it
	if m := nextReply(t, br); !strings.Contains(m.Error, "at most") {
		t.Errorf("a huge line: %+v, want refused", m)
	}
	if _, err := readLine(br, MaxMessage); err == nil {
		t.Error("the connection stayed open after a huge line")
	}
	if s.Title() != "still fine" {
		t.Errorf("title %q", s.Title())
	}
	cl := dial(t, dir, s.ID(), "web") // the session still takes clients
	if cl.Hello().Title != "still fine" {
		t.Errorf("a new client's hello has title %q", cl.Hello().Title)
	}
}

// TestManyClients: past maxClients a client is refused in words; one that
// leaves makes room.
func TestManyClients(t *testing.T) {
	s, dir := live(t, askOnce)
	conns := make([]net.Conn, maxClients)
	for i := range conns {
		conns[i], _ = raw(t, dir, s.ID())
	}
	_, err := DialSession(t.Context(), dir, s.ID(), DialOptions{From: "web"})
	if err == nil || !strings.Contains(err.Error(), "too many clients") {
		t.Fatalf("client %d: %v, want refused", maxClients+1, err)
	}
	_ = conns[0].Close()
	for { // the server notices the leaving client when it reads its end
		c, err := DialSession(t.Context(), dir, s.ID(), DialOptions{From: "web"})
		if err == nil {
			_ = c.Close()
			break
		}
		if !strings.Contains(err.Error(), "too many clients") {
			t.Fatal(err)
		}
	}
}
