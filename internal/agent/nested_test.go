package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/tool/fs"
	"github.com/dsh-dev/dsh/internal/tool/search"
	"github.com/dsh-dev/dsh/internal/workspace"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reads is a turn per path that reads it, then one that ends the turn.
func reads(paths ...string) []turnFunc {
	var turns []turnFunc
	for i, p := range paths {
		turns = append(turns, reply(use(string(rune('a'+i)), "read", `{"path":"`+p+`"}`)))
	}
	return append(turns, reply(text("done")))
}

func instructionRecords(recs []session.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Type == session.TypeInstructions {
			out = append(out, r.Path+": "+r.Text[:min(len(r.Text), 40)])
		}
	}
	return out
}

// The first read under a directory adds the AGENTS.md (else CLAUDE.md) of each
// directory between the root and the file, outermost first, after the read's
// result; later reads add nothing, and neither does a reloaded session.
func TestNestedInstructionsOncePerDirectory(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.dir, "AGENTS.md"), "ROOT (in the system prompt)")
	write(t, filepath.Join(e.dir, "sub", "AGENTS.md"), "SUB rules")
	write(t, filepath.Join(e.dir, "sub", "deep", "CLAUDE.md"), "DEEP rules")
	write(t, filepath.Join(e.dir, "sub", "deep", "x.go"), "package x\n")
	write(t, filepath.Join(e.dir, "sub", "y.go"), "package sub\n")
	write(t, filepath.Join(e.dir, "top.go"), "package top\n")
	reg := tool.NewRegistry(fs.Read())
	fp := &fakeProvider{turns: reads("top.go", "sub/deep/x.go", "sub/y.go")}
	cfg := Config{Provider: fp, Registry: reg, Log: e.log, Tools: e.tools}
	a := New(cfg)
	if _, err := a.Prompt(t.Context(), "read them"); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t)
	want := []string{"sub/AGENTS.md: SUB rules", "sub/deep/CLAUDE.md: DEEP rules"}
	if got := instructionRecords(recs); !slices.Equal(got, want) {
		t.Fatalf("instructions records = %q, want %q", got, want)
	}
	reqs := fp.requests()
	third := reqs[2].Messages[len(reqs[2].Messages)-1].Parts
	if len(third) != 3 || third[0].Type != provider.PartToolResult ||
		!strings.Contains(third[1].Text, "SUB rules") || !strings.Contains(third[2].Text, "DEEP rules") {
		t.Errorf("the request after reading sub/deep/x.go ends with %+v, want its result then both instructions", third)
	}
	if err := checkConversation(reqs[3].Messages); err != nil {
		t.Error(err)
	}

	b := New(cfg)
	for _, r := range recs {
		b.Fold(r)
	}
	if got, want := describe(b.messages()), describe(a.messages()); !slices.Equal(got, want) {
		t.Errorf("reloaded context:\n%s\nlive:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fp.turns = reads("sub/deep/x.go")
	if _, err := b.Prompt(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if got := instructionRecords(e.records(t)); !slices.Equal(got, want) {
		t.Errorf("after a reload and another read: %q, want still %q", got, want)
	}
}

// The files a call touched come from its tool: a write into a directory adds
// that directory's instructions as a read under it does; a search adds none.
func TestNestedInstructionsOfTouchedFiles(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.dir, "new", "AGENTS.md"), "NEW rules")
	write(t, filepath.Join(e.dir, "other", "AGENTS.md"), "OTHER rules")
	write(t, filepath.Join(e.dir, "other", "z.go"), "package other\n")
	reg := tool.NewRegistry(fs.Read(), fs.Write(), search.Grep())
	fp := &fakeProvider{turns: []turnFunc{
		reply(use("g", "grep", `{"pattern":"package"}`)),
		reply(use("w", "write", `{"path":"new/a.go","content":"package a\n"}`)),
		reply(text("done")),
	}}
	a := New(Config{Provider: fp, Registry: reg, Log: e.log, Tools: e.tools, Mode: ModeBypass})
	if _, err := a.Prompt(t.Context(), "write one"); err != nil {
		t.Fatal(err)
	}
	if got, want := instructionRecords(e.records(t)), []string{"new/AGENTS.md: NEW rules"}; !slices.Equal(got, want) {
		t.Errorf("instructions records = %q, want %q", got, want)
	}
}

// A repository controls its AGENTS.md files: one that resolves outside the
// workspace (a symlinked file or directory) is not loaded, nor one that is not a
// regular file, nor an empty one; a huge one is cut at the cap, on a character
// boundary.
func TestNestedInstructionsAttacks(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "AGENTS.md"), "SECRET outside the workspace")
	write(t, filepath.Join(outside, "f.go"), "package f\n")

	e := newEnv(t)
	ws, err := workspace.New(e.dir, true) // --allow-outside: the read itself works everywhere
	if err != nil {
		t.Fatal(err)
	}
	e.tools = tool.NewSession("test", ws)
	t.Cleanup(func() { e.tools.Close() })

	// A directory symlinked to outside the workspace.
	if err := os.Symlink(outside, filepath.Join(e.dir, "linked")); err != nil {
		t.Fatal(err)
	}
	// An AGENTS.md symlinked to a file outside.
	write(t, filepath.Join(e.dir, "evil", "f.go"), "package evil\n")
	if err := os.Symlink(filepath.Join(outside, "AGENTS.md"), filepath.Join(e.dir, "evil", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	// A directory named AGENTS.md, with a CLAUDE.md to fall back on.
	write(t, filepath.Join(e.dir, "odd", "AGENTS.md", "x"), "")
	write(t, filepath.Join(e.dir, "odd", "CLAUDE.md", "x"), "")
	write(t, filepath.Join(e.dir, "odd", "f.go"), "package odd\n")
	// Empty instructions.
	write(t, filepath.Join(e.dir, "empty", "AGENTS.md"), " \n")
	write(t, filepath.Join(e.dir, "empty", "f.go"), "package empty\n")
	// A huge one whose cap falls inside a two-byte character.
	write(t, filepath.Join(e.dir, "huge", "AGENTS.md"), "x"+strings.Repeat("é", MaxNestedInstructions))
	write(t, filepath.Join(e.dir, "huge", "f.go"), "package huge\n")

	fp := &fakeProvider{turns: reads(filepath.Join(outside, "f.go"), "linked/f.go", "evil/f.go", "odd/f.go", "empty/f.go", "huge/f.go")}
	a := New(Config{Provider: fp, Registry: tool.NewRegistry(fs.Read()), Log: e.log, Tools: e.tools})
	if _, err := a.Prompt(t.Context(), "read them"); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t)
	var got []session.Record
	for _, r := range recs {
		if r.Type == session.TypeToolResult && r.Result.IsError {
			t.Errorf("a read failed: %s", r.Result.TextOf())
		}
		if r.Type == session.TypeInstructions {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Path != "huge/AGENTS.md" {
		t.Fatalf("instructions records = %q, want only huge/AGENTS.md", instructionRecords(recs))
	}
	text := got[0].Text
	if !utf8.ValidString(text) || strings.ContainsRune(text, utf8.RuneError) || len(text) > MaxNestedInstructions+200 ||
		!strings.Contains(text, "the rest was left out") {
		t.Errorf("huge instructions: %d bytes, valid %v, ends %q", len(text), utf8.ValidString(text), text[len(text)-80:])
	}
	for _, r := range fp.requests() {
		for _, m := range r.Messages {
			for _, p := range m.Parts {
				if strings.Contains(p.Text, "SECRET") {
					t.Fatal("instructions from outside the workspace reached the model")
				}
			}
		}
	}
}

func TestNestedDirs(t *testing.T) {
	ws, err := workspace.New(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	root := ws.Root()
	for _, tc := range []struct {
		file string
		want []string
	}{
		{filepath.Join(root, "a", "b", "c.go"), []string{"a", filepath.Join("a", "b")}},
		{filepath.Join(root, "a", "c.go"), []string{"a"}},
		{filepath.Join(root, "c.go"), nil},
		{root, nil},
		{filepath.Join(root, "a", "..", "..", "etc", "passwd"), nil},
		{root + "2/a/c.go", nil},
		{"a/c.go", nil},
		{"", nil},
	} {
		if got := nestedDirs(ws, tc.file); !slices.Equal(got, tc.want) {
			t.Errorf("nestedDirs(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
}
