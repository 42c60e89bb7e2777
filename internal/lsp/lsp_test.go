package lsp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/proctest"
)

// hangServer is a language server that reads its input and never answers.
func hangServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hang-server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n# The shell keeps stdout open while cat swallows stdin.\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A server that never answers costs a check its bound, not more: the check
// returns Pending (the test's own timeout is the proof that it returns), the
// next one too, and Close still ends the server and what it started.
func TestSilentServerIsBounded(t *testing.T) {
	root := t.TempDir()
	m := NewManager(root, Config{Wait: 200 * time.Millisecond, Servers: map[string]Server{"go": {Command: []string{hangServer(t)}}}, Trust: NewTrust(true, false, nil, "")})
	path := filepath.Join(root, "m.go")
	for range 2 {
		r := m.Check(context.Background(), path, []byte("package m\n"))
		if r == nil || !r.Pending || len(r.Diagnostics) != 0 {
			t.Fatalf("check = %+v, want pending", r)
		}
	}
	pids := waitPids(t, m)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pg := range pids {
		proctest.GroupGone(t, pg)
	}
	if r := m.Check(context.Background(), path, []byte("package m\n")); r != nil {
		t.Errorf("check after Close = %+v, want nil", r)
	}
}

// waitPids waits for the servers' processes to be running.
func waitPids(t *testing.T, m *Manager) []int {
	t.Helper()
	for range 500 {
		if p := m.Pids(); len(p) > 0 {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no server process started")
	return nil
}

func TestNoServer(t *testing.T) {
	root := t.TempDir()
	for name, cfg := range map[string]Config{
		"not installed": {Servers: map[string]Server{"go": {Command: []string{filepath.Join(root, "none")}}}},
		"disabled":      {Servers: map[string]Server{"go": {Command: []string{hangServer(t)}, Disabled: true}}},
		"off":           {Off: true, Servers: map[string]Server{"go": {Command: []string{hangServer(t)}}}},
	} {
		m := NewManager(root, cfg)
		if m.Checks(filepath.Join(root, "m.go")) {
			t.Errorf("%s: Known", name)
		}
		if r := m.Check(context.Background(), filepath.Join(root, "m.go"), nil); r != nil {
			t.Errorf("%s: check = %+v", name, r)
		}
		if len(m.Pids()) != 0 {
			t.Errorf("%s: a server started", name)
		}
	}
	m := NewManager(root, Config{})
	if r := m.Check(context.Background(), filepath.Join(root, "notes.txt"), nil); r != nil {
		t.Errorf("a text file was checked: %+v", r)
	}
}
