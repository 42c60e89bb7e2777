package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
)

// TestPermit: a server starts only in a trusted folder; an undecided one is
// asked about once, and the answer holds; read-only callers (ask nil) are
// never asked; a yes for the folder is recorded.
func TestPermit(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "m.go")
	for _, tc := range []struct {
		name               string
		trusted, declined  bool
		canAsk             bool
		answer             string
		askErr             error
		recordErr          error
		wantOK, wantRecord bool
		wantAsked          int
		wantNote           string
	}{
		{name: "trusted", trusted: true, canAsk: true, wantOK: true},
		{name: "declined earlier", declined: true, canAsk: true, wantNote: "until the user trusts it"},
		{name: "no one to ask", canAsk: false, wantNote: "until the user trusts it"},
		{name: "trust the folder", canAsk: true, answer: answerTrust, wantOK: true, wantRecord: true, wantAsked: 1},
		{name: "record fails", canAsk: true, answer: answerTrust, recordErr: errors.New("disk full"), wantOK: true, wantRecord: true, wantAsked: 1, wantNote: "disk full"},
		{name: "this session", canAsk: true, answer: answerSession, wantOK: true, wantAsked: 1},
		{name: "no", canAsk: true, answer: answerNo, wantAsked: 1, wantNote: "until the user trusts it"},
		{name: "no answer", canAsk: true, askErr: errors.New("no one answers"), wantAsked: 1, wantNote: "until the user trusts it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorded := false
			tr := NewTrust(tc.trusted, tc.declined, func() error { recorded = true; return tc.recordErr }, "")
			// The server never answers: a check is pending after its bound.
			m := NewManager(root, Config{Trust: tr, Wait: 10 * time.Millisecond, Servers: map[string]Server{"go": {Command: []string{hangServer(t)}}}})
			defer func() { _ = m.Kill() }()
			asked := 0
			var ask func(context.Context, tool.Question) (card.Answer, error)
			if tc.canAsk {
				ask = func(_ context.Context, q tool.Question) (card.Answer, error) {
					asked++
					if !strings.Contains(q.Text, "Start hang-server") || len(q.Choices) != 3 {
						t.Errorf("question %+v", q)
					}
					return card.Answer{ID: tc.answer}, tc.askErr
				}
			}
			for i := range 2 {
				ok, note := m.Permit(context.Background(), path, ask)
				if ok != tc.wantOK {
					t.Errorf("call %d: ok = %v", i, ok)
				}
				if i == 0 && ((tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote)) {
					t.Errorf("call %d: note %q, want %q", i, note, tc.wantNote)
				}
				if i == 1 && note != "" {
					t.Errorf("told twice: %q", note)
				}
			}
			if asked != tc.wantAsked || recorded != tc.wantRecord {
				t.Errorf("asked %d times, recorded %v", asked, recorded)
			}
			if r := m.Check(context.Background(), path, []byte("package m\n")); (r != nil) != tc.wantOK {
				t.Errorf("check = %+v", r)
			}
			if !tc.wantOK && len(m.Pids()) != 0 {
				t.Error("a server started in an untrusted folder")
			}
		})
	}
	// Without a Trust, nothing starts and nothing is asked.
	m := NewManager(root, Config{Servers: map[string]Server{"go": {Command: []string{hangServer(t)}}}})
	if ok, _ := m.Permit(context.Background(), path, func(context.Context, tool.Question) (card.Answer, error) {
		t.Error("asked")
		return card.Answer{ID: answerTrust}, nil
	}); ok || m.Check(context.Background(), path, nil) != nil {
		t.Error("a manager without trust runs servers")
	}
}

// TestServerEnv: the servers' PATH has no directory of the workspace, their
// rustup toolchain is the user's, never the repository's pin, and credentials
// stay out.
func TestServerEnv(t *testing.T) {
	root := t.TempDir()
	rhome := t.TempDir()
	if err := os.WriteFile(filepath.Join(rhome, "settings.toml"), []byte(
		"default_toolchain = \"stable-x\"\n[overrides]\n\""+filepath.Dir(root)+"\" = \"nightly-x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noDefault := t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"path", []string{"PATH=" + root + "/node_modules/.bin:/usr/bin:.:bin:" + root + ":/bin", "RUSTUP_HOME=" + noDefault},
			[]string{"PATH=/usr/bin:/bin", "RUSTUP_TOOLCHAIN=stable"}},
		{"override above the root", []string{"RUSTUP_HOME=" + rhome}, []string{"RUSTUP_TOOLCHAIN=nightly-x"}},
		{"the user's own pin", []string{"RUSTUP_HOME=" + rhome, "RUSTUP_TOOLCHAIN=beta"}, []string{"RUSTUP_TOOLCHAIN=beta"}},
		{"an empty pin", []string{"RUSTUP_TOOLCHAIN=", "HOME=/nonexistent"}, []string{"RUSTUP_TOOLCHAIN=stable"}},
		{"credentials", []string{"ANTHROPIC_API_KEY=sk-ant-x", "HOME=/nonexistent"}, []string{"RUSTUP_TOOLCHAIN=stable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serverEnv(tc.env, root)
			var gotRelevant []string
			for _, kv := range got {
				if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "RUSTUP_TOOLCHAIN=") || strings.Contains(kv, "API_KEY") {
					gotRelevant = append(gotRelevant, kv)
				}
			}
			if !slices.Equal(gotRelevant, tc.want) {
				t.Errorf("env %v, want %v", gotRelevant, tc.want)
			}
		})
	}
}

// TestLookPathOutside: a server's command is never found in the workspace,
// even first on PATH, nor by a relative path.
func TestLookPathOutside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	inBin := filepath.Join(root, "bin")
	for _, d := range []string{inBin, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "gopls"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + inBin + ":" + filepath.Join(link, "bin") + ":" + outside}
	if got, ok := lookPath("gopls", env, root); !ok || got != filepath.Join(outside, "gopls") {
		t.Errorf("gopls = %q, %v; want the one outside the workspace", got, ok)
	}
	if _, ok := lookPath("gopls", []string{"PATH=" + inBin}, root); ok {
		t.Error("found in the workspace")
	}
	if _, ok := lookPath("./bin/gopls", env, root); ok {
		t.Error("a relative command was resolved")
	}
}

// TestDiagnosticsBounded: a server's 1 MB message is clipped, on a rune
// boundary, before it is kept; a file's report is bounded in bytes as in
// count; hints are not kept.
func TestDiagnosticsBounded(t *testing.T) {
	c := &client{server: "s", docs: map[uri.URI]*doc{}, all: map[uri.URI][]protocol.Diagnostic{}}
	root := t.TempDir()
	path := filepath.Join(root, "m.go")
	var ds []protocol.Diagnostic
	for i := range 50 {
		ds = append(ds, protocol.Diagnostic{Range: protocol.Range{Start: protocol.Position{Line: uint32(i)}},
			Severity: protocol.DiagnosticSeverityError, Message: strings.Repeat("é", 1<<19), Source: strings.Repeat("s", 1<<10)})
	}
	ds = append(ds, protocol.Diagnostic{Severity: protocol.DiagnosticSeverityHint, Message: "hint"})
	c.published(&protocol.PublishDiagnosticsParams{URI: uri.File(path), Diagnostics: ds})
	got := c.known(root)
	size := 0
	for _, d := range got {
		size += len(d.Message) + len(d.Source)
		if len(d.Message) > maxMessage || !utf8.ValidString(d.Message) || !strings.HasSuffix(d.Message, "…") || len(d.Source) > maxSource {
			t.Fatalf("diagnostic not clipped: %d bytes, valid %v", len(d.Message), utf8.ValidString(d.Message))
		}
	}
	if len(got) == 0 || size > maxFileBytes {
		t.Errorf("%d diagnostics, %d bytes; want some, at most %d bytes", len(got), size, maxFileBytes)
	}
	r := c.report(path, c.all[uri.File(path)])
	if len(r.Diagnostics)+r.More != 50 {
		t.Errorf("%d reported + %d more, want 50 errors in all", len(r.Diagnostics), r.More)
	}
	if f := failed("s", errors.New(strings.Repeat("x", 1<<20))); len(f.Failed) > maxFailed {
		t.Errorf("a failure of %d bytes", len(f.Failed))
	}
}
