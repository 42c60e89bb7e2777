package host

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
)

// /diff shows what the session, or one change, did to the files, changes by
// commands included, as a reply whose record holds both texts of each file
// (the consumers draw it as hunks); an undo is a change of its own; a change
// that does not exist, or no change yet, is said in words.
func TestDiffCommand(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	put(t, root, "a.txt", "one\ntwo\nthree\n")
	put(t, root, "gone.txt", "bye\n")
	gitRepo(t, root)
	p := scripted(t, `{"turns": [
		{"tool_calls": [{"name": "bash", "args": {"command": "sed -i s/two/TWO/ a.txt && rm gone.txt && echo hi > new.txt"}}]},
		{"text": "done"},
		{"tool_calls": [{"name": "bash", "args": {"command": "echo more >> new.txt"}}]},
		{"text": "done"}
	]}`)
	o := options(t, root, dir, p)
	o.Ask = true
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	a := &approver{d: agent.AllowOnce}
	defer a.watch(s).Close()
	submit := func(text string) Reply {
		t.Helper()
		a, err := s.Submit(context.Background(), Input{Text: text, Where: Both})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return a.Reply
	}
	if r := submit("/diff"); r.Text != "There is no change to show yet." || r.Diff != nil {
		t.Errorf("/diff before any prompt: %+v", r)
	}
	for _, prompt := range []string{"shout two", "add more"} {
		if _, err := s.Prompt(context.Background(), prompt); err != nil {
			t.Fatal(err)
		}
	}
	str := func(p *string) string {
		if p == nil {
			return "<none>"
		}
		return *p
	}
	type file struct{ old, new string }
	for _, tc := range []struct {
		args, title string
		want        map[string]file
	}{
		{"", "The session changed a.txt, gone.txt, new.txt", map[string]file{
			"a.txt": {"one\ntwo\nthree\n", "one\nTWO\nthree\n"}, "gone.txt": {"bye\n", "<none>"}, "new.txt": {"<none>", "hi\nmore\n"}}},
		{"1", `Prompt 1 ("shout two") changed a.txt, gone.txt, new.txt`, map[string]file{
			"a.txt": {"one\ntwo\nthree\n", "one\nTWO\nthree\n"}, "gone.txt": {"bye\n", "<none>"}, "new.txt": {"<none>", "hi\n"}}},
		{"2", `Prompt 2 ("add more") changed new.txt`, map[string]file{"new.txt": {"hi\n", "hi\nmore\n"}}},
	} {
		r := submit(strings.TrimSpace("/diff " + tc.args))
		if r.Text != tc.title {
			t.Errorf("/diff %s: %q, want %q", tc.args, r.Text, tc.title)
		}
		got := map[string]file{}
		for _, f := range r.Diff {
			got[f.Path] = file{str(f.OldText), str(f.NewText)}
		}
		if len(got) != len(tc.want) {
			t.Errorf("/diff %s: files %v, want %v", tc.args, got, tc.want)
		}
		for p, w := range tc.want {
			if got[p] != w {
				t.Errorf("/diff %s: %s is %q, want %q", tc.args, p, got[p], w)
			}
		}
	}
	if r := submit("/diff 3"); r.Text != "Cannot show a diff: want /diff [N], N a change from 1 to 2 (/rewind lists them)." {
		t.Errorf("/diff 3: %q", r.Text)
	}
	if r := submit("/undo"); strings.HasPrefix(r.Text, "Cannot") {
		t.Fatalf("/undo: %q", r.Text)
	}
	if r := submit("/diff 3"); r.Text != "Change 3 (an undo) changed new.txt" {
		t.Errorf("/diff of the undo: %q", r.Text)
	}

	// The log holds each diff with its reply, for every view and replay.
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Type == session.TypeReply && len(r.Diff) > 0 {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d replies in the log hold a diff, want 4", n)
	}
}
