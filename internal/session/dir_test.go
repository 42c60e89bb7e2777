package session

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		name, override, xdg, want string
	}{
		{"override wins", "/custom/dir", "/state", "/custom/dir"},
		{"xdg state home", "", "/state", "/state/dsh/sessions"},
		{"unset falls back to home", "", "", filepath.Join(home, ".local/state/dsh/sessions")},
		{"relative xdg is ignored", "", "rel/state", filepath.Join(home, ".local/state/dsh/sessions")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			if tt.xdg == "" {
				os.Unsetenv("XDG_STATE_HOME")
			}
			got, err := Dir(tt.override)
			if err != nil || got != tt.want {
				t.Errorf("Dir(%q) = %q, %v; want %q", tt.override, got, err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); !os.IsNotExist(err) {
		t.Error("Dir created a directory")
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2025, 3, 14, 10, 30, 12, 0, time.FixedZone("CET", 3600))
	a, b := NewID(at), NewID(at)
	if !regexp.MustCompile(`^20250314-093012-[a-z2-7]{8}$`).MatchString(a) {
		t.Errorf("NewID = %q, want UTC time then 8 random [a-z2-7]", a)
	}
	if a == b {
		t.Errorf("two ids in the same second are equal: %q", a)
	}
	later := NewID(at.Add(time.Second))
	if !ValidID(a) || later <= a || later <= b {
		t.Errorf("ids do not sort by time: %q then %q", a, later)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"20250314-093012-aaaa", "20250314-093012-aaab", "20250315-120000-zzzz"} {
		create(t, dir, id, Options{})
	}
	outside := writeLog(t, hdr+"\n")
	os.WriteFile(filepath.Join(dir, "..x.jsonl"), []byte(hdr+"\n"), 0o600)
	tests := []struct {
		in, want, err string
	}{
		{in: "20250315-120000-zzzz", want: filepath.Join(dir, "20250315-120000-zzzz.jsonl")},
		{in: "20250315", want: filepath.Join(dir, "20250315-120000-zzzz.jsonl")},
		{in: outside, want: outside},
		{in: "", err: `no session given (run "dsh sessions" to list them)`},
		{in: "20250314-093012-aaa", err: `session "20250314-093012-aaa" is ambiguous: 20250314-093012-aaaa, 20250314-093012-aaab`},
		{in: "nope", err: `no session "nope" in ` + dir + ` (run "dsh sessions" to list them)`},
		{in: "../x", err: "session log: stat ../x: no such file or directory"},
		{in: "a/b", err: "session log: stat a/b: no such file or directory"},
		{in: "..", err: `invalid session id ".."`},
		{in: "..x", err: `invalid session id "..x"`},
		{in: "ABC", err: `invalid session id "ABC"`},
		{in: "-rf", err: `invalid session id "-rf"`},
		{in: "a b", err: `invalid session id "a b"`},
		{in: dir, err: "is not a file"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Resolve(dir, tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Resolve(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := Resolve(filepath.Join(dir, "missing"), "x"); err == nil || !strings.Contains(err.Error(), "dsh sessions") {
		t.Errorf("Resolve in a missing dir = %v", err)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(min int) func() time.Time {
		return func() time.Time { return base.Add(time.Duration(min) * time.Minute) }
	}

	// old: started first, updated last, closed.
	old := create(t, dir, "a-old", Options{Now: at(0)})
	appendAll(t, old, []Record{
		{Type: TypeAssistant, Text: "before the prompt", Time: at(1)()},
		{Type: TypeUser, Text: "first prompt", Time: at(2)()},
		{Type: TypeUser, Text: "second prompt", Time: at(3)()},
		{Type: TypeTurnEnd, StopReason: "end_turn", Time: at(30)()},
	})
	old.Close()
	// open: still being written, no prompt yet.
	open := create(t, dir, "b-open", Options{Now: at(5)})
	// mid: closed, a prompt's "after" logged later in the background and a
	// torn last line (neither's time counts).
	mid := create(t, dir, "c-mid", Options{Now: at(10)})
	appendAll(t, mid, []Record{
		{Type: TypeUser, Text: "fix it", Time: at(11)()},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: 1, Phase: PhaseAfter, Note: "late"}, Time: at(40)()},
	})
	mid.Close()
	f, _ := os.OpenFile(mid.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"assistant","time":"2030-01-01T00:00:00Z","te`)
	f.Close()
	// Not sessions, or not readable ones: left out.
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "newer.jsonl"), []byte(`{"type":"header","version":99,"sessionId":"newer"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "Bad_Name.jsonl"), []byte(hdr+"\n"), 0o600)
	os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700)

	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Info{
		{ID: "a-old", Path: old.Path(), Cwd: "/work/project", FirstPrompt: "first prompt", Start: at(0)(), Updated: at(30)(), Records: 5},
		{ID: "c-mid", Path: mid.Path(), Cwd: "/work/project", FirstPrompt: "fix it", Start: at(10)(), Updated: at(11)(), Records: 3},
		{ID: "b-open", Path: open.Path(), Cwd: "/work/project", Start: at(5)(), Updated: at(5)(), Live: true, Records: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
	open.Close()
	got, _ = List(dir)
	if i := slices.IndexFunc(got, func(in Info) bool { return in.ID == "b-open" }); i < 0 || got[i].Live {
		t.Errorf("a closed session is still live: %+v", got)
	}

	if got, err := List(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("List of a missing dir = %v, %v; want nothing", got, err)
	}
}
