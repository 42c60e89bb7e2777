package host

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/session"
)

// submitSession is a session in a fresh workspace whose model echoes what it
// is sent.
func submitSession(t *testing.T, custom string) (*Session, string) {
	t.Helper()
	root := t.TempDir()
	p, err := script.Parse([]byte(`{"turns": [{"echo_request": true}, {"echo_request": true}, {"echo_request": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{SessionDir: t.TempDir(), Root: root, Provider: func() (provider.Provider, error) { return p, nil }}
	if custom != "" {
		o.CommandDirs = []command.Dir{{Path: custom}}
	}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, root
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSubmitAttaches: @path attaches a workspace file as text and an image as
// an image; a link out of the workspace, a parent path, a FIFO, an absolute
// path to a text file and a missing file are not attached, and the user is
// told why; an absolute path to an image (a dropped screenshot) is.
func TestSubmitAttaches(t *testing.T) {
	s, root := submitSession(t, "")
	outside := t.TempDir()
	for path, data := range map[string][]byte{
		filepath.Join(root, "main.go"):     []byte("package main\n```\n"),
		filepath.Join(root, "shot.png"):    pngBytes(t),
		filepath.Join(outside, "secret"):   []byte("s3cret"),
		filepath.Join(outside, "drop.png"): pngBytes(t),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notices []string
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindNotice {
			mu.Lock()
			notices = append(notices, e.Text)
			mu.Unlock()
		}
	})
	text := "explain @main.go and @shot.png, not @link, @../x, @fifo, @" + filepath.Join(outside, "secret") +
		" or @nope; but @" + filepath.Join(outside, "drop.png") + " is a screenshot"
	a, err := s.Submit(t.Context(), Input{Text: text, Where: Terminal})
	if err != nil || !a.Turn || a.Stop != StopEndTurn {
		t.Fatalf("Submit = %+v, %v", a, err)
	}
	sub.Flush(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	user := lastUser(t, s)
	if user.Text != text {
		t.Errorf("the record's text is %q, want it as typed", user.Text)
	}
	var got []string
	for _, c := range user.Content {
		got = append(got, string(c.Type)+" "+c.URI)
	}
	if want := "resource main.go|image shot.png|image " + filepath.Join(outside, "drop.png"); strings.Join(got, "|") != want {
		t.Errorf("attached %q, want %q", got, want)
	}
	if model := attach.ModelText(user.Text, user.Content); strings.Contains(model, "s3cret") || !strings.Contains(model, "````go\npackage main\n```\n````") {
		t.Errorf("the model is sent:\n%s", model)
	}
	if len(notices) != 5 {
		t.Errorf("want five files not attached, with why; told %q", notices)
	}
	for _, n := range notices {
		if !strings.HasPrefix(n, "not attached: @") {
			t.Errorf("notice %q is not in the user's words", n)
		}
	}
}

// TestSubmitCommands: a custom command is logged as typed with its expansion
// beside it, which the model gets; a built-in command is logged as typed with
// its answer and reaches no model; a consumer's own command (/exit) is not
// logged; an unknown one is refused and nothing is logged; the editor does
// not offer the terminal's commands.
func TestSubmitCommands(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.md"), []byte("---\ndescription: greet\n---\nSay hello to $ARGUMENTS.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "help.md"), []byte("a custom help cannot shadow the built-in one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := submitSession(t, dir)
	if _, ok := command.Find(s.Commands(), "greet"); !ok {
		t.Fatal("the custom command is not in the session's table")
	}
	if help, _ := command.Find(s.Commands(), "help"); help.Custom() {
		t.Error("a custom command shadowed /help")
	}
	for _, c := range s.CommandsFor(Editor) {
		if c.Name == "exit" || c.Name == "help" || c.Name == "new" {
			t.Errorf("the editor offers the terminal-only /%s", c.Name)
		}
	}
	for text, want := range map[string]bool{"/cost": true, "/exit": true, "/compact": false, "/greet x": false, "hello": false, "/tmp/x y": false} {
		if got := s.Answers(text, Terminal); got != want {
			t.Errorf("Answers(%q) = %v, want %v", text, got, want)
		}
	}
	if s.Answers("/exit", Editor) {
		t.Error("the editor's /exit is not the host's to answer")
	}
	a, err := s.Submit(t.Context(), Input{Text: "/greet the world", Where: Editor})
	if err != nil || !a.Turn {
		t.Fatalf("/greet: %+v, %v", a, err)
	}
	user := lastUser(t, s)
	if user.Text != "/greet the world" || attach.ModelText(user.Text, user.Content) != "Say hello to the world.\n" {
		t.Errorf("logged %q with %+v", user.Text, user.Content)
	}
	if a, err := s.Submit(t.Context(), Input{Text: "/cost", Where: Terminal}); err != nil || a.Turn || a.Command != "cost" || !strings.HasPrefix(a.Text, "This session used") {
		t.Errorf("/cost: %+v, %v", a, err)
	}
	if a, err := s.Submit(t.Context(), Input{Text: "/exit", Where: Terminal}); err != nil || a.Action != ActionExit {
		t.Errorf("/exit: %+v, %v", a, err)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/exit", Where: Editor}); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("/exit in the editor: %v, want ErrUnknownCommand", err)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/nope x", Where: Terminal}); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("/nope: %v, want ErrUnknownCommand", err)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for _, r := range recs {
		if r.Type == session.TypeUser || r.Type == session.TypeCommand || r.Type == session.TypeReply {
			seq = append(seq, string(r.Type)+" "+strings.SplitN(r.Text, " ", 2)[0])
		}
	}
	if want := "user /greet|command /cost|reply This"; strings.Join(seq, "|") != want {
		t.Errorf("logged %q, want %q", seq, want)
	}
}

// TestSubmitKeepsPastes: a paste's placeholder stays in the typed text and its
// block in the content; the model gets the paste in its place.
func TestSubmitKeepsPastes(t *testing.T) {
	s, _ := submitSession(t, "")
	text, pastes := attach.Pastes("look: [paste #1: 3 lines, 6 bytes]", map[int]string{1: "a\nb\nc\n"})
	if _, err := s.Submit(t.Context(), Input{Text: text, Content: pastes, Where: Terminal}); err != nil {
		t.Fatal(err)
	}
	user := lastUser(t, s)
	if user.Text != text || len(user.Content) != 1 || user.Content[0].Type != card.ContentPaste {
		t.Errorf("logged %q %+v", user.Text, user.Content)
	}
	if got := attach.ModelText(user.Text, user.Content); got != "look: a\nb\nc\n" {
		t.Errorf("the model gets %q", got)
	}
}

func lastUser(t *testing.T, s *Session) session.Record {
	t.Helper()
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == session.TypeUser {
			return recs[i]
		}
	}
	t.Fatal("no user record")
	return session.Record{}
}

// TestSubmitShell: "!cmd" runs the user's own command as a bash call, with no
// question, logged as a call and its result; the model gets the output with
// the next prompt.
func TestSubmitShell(t *testing.T) {
	root := t.TempDir()
	p := scriptOf(t, `{"turns": [{"text": "It printed from-the-user."}]}`)
	s, err := Create(Options{SessionDir: t.TempDir(), Root: root, Ask: true, Mode: ModeDefault,
		Provider: func() (provider.Provider, error) { return p, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	asked := 0
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			asked++
			e.Permission.Answer(Reject)
		}
	})
	a, err := s.Submit(t.Context(), Input{Text: "!echo from-the-user > out.txt; cat out.txt", Where: Terminal})
	if err != nil || !a.Turn || a.Stop != StopEndTurn {
		t.Fatalf("Submit = %+v, %v", a, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "from-the-user\n" {
		t.Fatalf("the command did not run: %q, %v", b, err)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "what did it print?", Where: Terminal}); err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	if asked != 0 {
		t.Errorf("the user's own command was asked about %d times", asked)
	}
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var calls string
	for _, r := range recs {
		if r.Type == session.TypeToolCall {
			calls += r.Name + " " + string(r.Args)
		}
	}
	if !strings.Contains(calls, "bash") || !strings.Contains(calls, "from-the-user") {
		t.Errorf("the command was not logged as a call: %q", calls)
	}
	// The model gets the call and its output before the prompt.
	var sent []string
	for _, m := range p.reqs[0].Messages {
		for _, part := range m.Parts {
			sent = append(sent, string(m.Role)+" "+string(part.Type)+" "+part.Text+part.Name)
			for _, c := range part.Content {
				sent = append(sent, "  "+c.Text)
			}
		}
	}
	if got := strings.Join(sent, "\n"); !strings.Contains(got, "from-the-user") || !strings.Contains(got, "what did it print?") {
		t.Errorf("the model was sent:\n%s", got)
	}
}

// TestSubmitBoundsAttachments: a body that names many large files (a
// repository's command may) attaches up to the bound, and says what it left.
func TestSubmitBoundsAttachments(t *testing.T) {
	s, root := submitSession(t, "")
	big := bytes.Repeat([]byte("x"), maxAttach-1)
	var text strings.Builder
	for i := range 80 {
		name := fmt.Sprintf("f%02d.txt", i)
		if err := os.WriteFile(filepath.Join(root, name), big, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&text, "@%s ", name)
	}
	files, skipped := s.attachFiles(text.String())
	total := 0
	for _, f := range files {
		total += len(f.Text)
	}
	if total > maxAttached || len(files) == 0 || len(files)+len(skipped) != 80 {
		t.Errorf("attached %d files (%d bytes), skipped %d; want at most %d bytes and the rest told", len(files), total, len(skipped), maxAttached)
	}
}
