package mcp

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/tool"
)

// The reference servers come from npm; .ci/run installs them into
// $DSH_TEST_NPM (default ~/.cache/dsh-test-npm) and sets DSH_REQUIRE_MCP=1 so
// that a missing install fails instead of skipping.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("DSH_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := "npm reference server " + name + " is not installed (" + bin + "); run: npm install --prefix " + dir +
			" @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem @modelcontextprotocol/conformance@0.1.16 node@22.23.3"
		if os.Getenv("DSH_REQUIRE_MCP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func TestEverythingServer(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	exits, restarts := make(chan string, 1), make(chan string, 1)
	s := start(t, []ServerConfig{{Name: "everything", Type: "stdio", Command: bin, Args: []string{"stdio"}, Trusted: true}},
		Options{OnExit: func(server string, err error) { exits <- server + ": " + err.Error() },
			OnRestart: func(server string, err error) { restarts <- server + ": " + err.Error() }})

	echo := find(t, s, "mcp__everything__echo")
	if !echo.ReadOnly() || echo.Permission() != tool.PermNone {
		t.Errorf("echo is annotated readOnlyHint: read-only %v, permission %v", echo.ReadOnly(), echo.Permission())
	}
	if !strings.Contains(string(echo.Schema()), `"message"`) {
		t.Errorf("echo schema = %s, want the server's (with message)", echo.Schema())
	}
	if r := run(t, echo, `{"message":"hello from dsh"}`); r.IsError || !strings.Contains(r.TextOf(), "hello from dsh") {
		t.Errorf("echo = %+v", r)
	}
	if r := run(t, find(t, s, "mcp__everything__get-sum"), `{"a":2,"b":40}`); r.IsError || !strings.Contains(r.TextOf(), "42") {
		t.Errorf("get-sum = %+v", r)
	}
	// The server validates arguments; a bad call is an error result, not a crash.
	if r := run(t, find(t, s, "mcp__everything__get-sum"), `{"a":"two"}`); !r.IsError {
		t.Errorf("get-sum with bad arguments = %+v", r)
	}

	r := run(t, find(t, s, "mcp__everything__get-tiny-image"), `{}`)
	var img []byte
	for _, c := range r.Content {
		if c.Type == "image" && c.MimeType == "image/png" {
			img, _ = base64.StdEncoding.DecodeString(c.Data)
		}
	}
	if r.IsError || !bytes.HasPrefix(img, pngMagic) {
		t.Errorf("get-tiny-image = %d blocks, image %d bytes: want a PNG image block", len(r.Content), len(img))
	}

	asks := 0
	for _, tl := range s.Tools() {
		if !validName(tl.Name()) {
			t.Errorf("invalid tool name %q", tl.Name())
		}
		if tl.Permission() == tool.PermExecute {
			asks++
		}
	}
	if asks == 0 {
		t.Error("every tool runs unasked; the tools without readOnlyHint must ask")
	}

	// Kill the server behind the client's back: it is started again once and
	// works; killed again, it is reported dead and calls fail.
	kill := func() {
		t.Helper()
		if err := syscall.Kill(-s.servers[0].conn().proc.Pgid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	kill()
	select {
	case got := <-restarts:
		if !strings.HasPrefix(got, "everything: ") {
			t.Errorf("restart report = %q", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the killed server was not restarted")
	}
	if r := run(t, echo, `{"message":"back"}`); r.IsError || !strings.Contains(r.TextOf(), "back") {
		t.Errorf("echo after the restart = %+v", r)
	}
	kill()
	select {
	case got := <-exits:
		if !strings.HasPrefix(got, "everything: ") {
			t.Errorf("exit report = %q", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the killed server was not reported")
	}
	if r := run(t, echo, `{"message":"x"}`); !r.IsError || !strings.Contains(r.TextOf(), "not running") {
		t.Errorf("a call to the killed server = %+v", r)
	}
}

func TestFilesystemServer(t *testing.T) {
	bin := npmBin(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, []ServerConfig{{Name: "fs", Type: "stdio", Command: bin, Args: []string{dir}, Trusted: true}}, Options{Dir: dir})

	write := find(t, s, "mcp__fs__write_file")
	if write.ReadOnly() || write.Permission() != tool.PermExecute {
		t.Errorf("write_file must ask: read-only %v, permission %v", write.ReadOnly(), write.Permission())
	}
	path := filepath.Join(dir, "note.txt")
	if r := run(t, write, `{"path":"`+path+`","content":"written through MCP\n"}`); r.IsError {
		t.Fatalf("write_file = %+v", r)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "written through MCP\n" {
		t.Errorf("the file holds %q, %v", b, err)
	}
	read := find(t, s, "mcp__fs__read_text_file")
	if !read.ReadOnly() || read.Permission() != tool.PermNone {
		t.Errorf("read_text_file is read-only: read-only %v, permission %v", read.ReadOnly(), read.Permission())
	}
	if r := run(t, read, `{"path":"`+path+`"}`); r.IsError || !strings.Contains(r.TextOf(), "written through MCP") {
		t.Errorf("read_text_file = %+v", r)
	}
	// The server's own confinement holds: no roots replaced its directory list.
	if r := run(t, read, `{"path":"`+outside+`"}`); !r.IsError || strings.Contains(r.TextOf(), "top secret") {
		t.Errorf("reading outside the allowed directory = %+v", r)
	}

	pgid := s.servers[0].conn().proc.Pgid
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	proctest.GroupGone(t, pgid)
}

// TestEverythingUntrusted: the reference server's read-only hints are not
// believed until the user trusts the server.
func TestEverythingUntrusted(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	s := start(t, []ServerConfig{{Name: "everything", Type: "stdio", Command: bin, Args: []string{"stdio"}}}, Options{})
	if echo := find(t, s, "mcp__everything__echo"); echo.ReadOnly() || echo.Permission() != tool.PermExecute {
		t.Errorf("an untrusted server's echo: read-only %v, permission %v", echo.ReadOnly(), echo.Permission())
	}
}
