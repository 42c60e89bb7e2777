package host

import (
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/session"
)

// TestRename: /rename names the session (a title record), a reload keeps
// the name, and an idle session is renamed in its log — one open in a dsh
// is not (its own process renames it).
func TestRename(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	p := scripted(t, `{"turns": [{"text": "ok"}]}`)
	s, err := Create(options(t, root, dir, p))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, reply, title string }{
		{"/rename", "Name this session", ""},
		{"/rename   Fix the parser  ", "Renamed the session: Fix the parser", "Fix the parser"},
		{"/rename", "This session is called “Fix the parser”", "Fix the parser"},
		{"/rename " + strings.Repeat("x", MaxTitle+1), "Cannot rename the session: a title has at most", "Fix the parser"},
	} {
		a, err := s.Submit(t.Context(), Input{Text: tc.in, Where: Editor})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.Text, tc.reply) || s.Title() != tc.title {
			t.Errorf("%.30s: reply %q, title %q; want %q, %q", tc.in, a.Text, s.Title(), tc.reply, tc.title)
		}
	}
	if err := RenameSession(dir, s.ID(), "from outside"); err == nil {
		t.Error("renamed a session open in this process through its log")
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := RenameSession(dir, s.ID(), "  Second name "); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "two\nlines"} {
		if err := RenameSession(dir, s.ID(), bad); err == nil {
			t.Errorf("RenameSession(%q) was taken", bad)
		}
	}
	if err := RenameSession(dir, "20990101-000000-nosuchid", "x"); err == nil {
		t.Error("renamed a session that does not exist")
	}
	r, err := Load(options(t, root, dir, p), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	if r.Title() != "Second name" {
		t.Errorf("reloaded title %q, want the last one given", r.Title())
	}
	infos, err := session.List(dir)
	if err != nil || len(infos) != 1 || infos[0].Title != "Second name" {
		t.Errorf("listed %+v (%v)", infos, err)
	}
}
