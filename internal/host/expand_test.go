package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/attach"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/script"
	"github.com/dsh-dev/dsh/internal/skills"
)

// shipCommand is a command file as Claude Code users write one: an unquoted
// description with ": ", allowed-tools for the commands it runs, a tool it
// forbids, a model alias, a !`cmd` whose output the prompt holds, $1.
const shipCommand = `---
description: Ship it: stage and record
allowed-tools: Bash(touch shipped-x), Bash(touch body-x), Bash(echo:*)
disallowed-tools: Write
model: haiku
---
Body said: !` + "`touch body-$1 && echo made body-$1`" + `
Ship $1.
`

// TestCommandFrontMatter: a command's front matter holds for its turn only.
// Its allowed-tools run what they name unasked — never what a `;` hides,
// never past read-only, never for an untrusted repository's file —
// disallowed-tools hide a tool, and model picks the model; its !`cmd` runs
// as a bash call (asked about where any call would be, and always for an
// untrusted repository's command) and its output is in the prompt. The next
// prompt has none of it.
func TestCommandFrontMatter(t *testing.T) {
	tests := []struct {
		name      string
		mode      agent.Mode
		untrusted bool
		asked     []string // the commands asked about, in order (all rejected)
		files     []string // what exists after both turns
		model     string   // the command's turn's model
		notices   []string
	}{
		{name: "trusted", mode: agent.ModeDefault,
			asked: []string{"touch shipped-x; touch evil", "touch shipped-x", "touch shipped-y"}, files: []string{"body-x", "shipped-x"}, model: "claude-haiku-5-5"},
		{name: "untrusted", mode: agent.ModeDefault, untrusted: true,
			asked:   []string{"touch body-x && echo made body-x", "touch shipped-x", "touch shipped-x; touch evil", "touch shipped-x", "touch shipped-y"},
			notices: []string{"allowed-tools ignored: the project is not trusted", "model haiku ignored: the project is not trusted"}},
		{name: "untrusted, bypass", mode: agent.ModeBypass, untrusted: true,
			asked: []string{"touch body-x && echo made body-x"}, files: []string{"shipped-x", "shipped-y", "evil"}},
		{name: "read-only", mode: agent.ModeReadOnly, model: "claude-haiku-5-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, ".claude", "commands")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "ship.md"), []byte(shipCommand), 0o644); err != nil {
				t.Fatal(err)
			}
			bash := func(cmd string) string { b, _ := json.Marshal(map[string]string{"command": cmd}); return string(b) }
			p, err := script.Parse([]byte(`{"turns": [
				{"tool_calls": [{"name": "bash", "args": ` + bash("touch shipped-x") + `}, {"name": "bash", "args": ` + bash("touch shipped-x; touch evil") + `},
					{"name": "write", "args": {"path": "w.txt", "content": "x"}}]},
				{"echo_settings": true},
				{"tool_calls": [{"name": "bash", "args": ` + bash("touch shipped-x") + `}, {"name": "bash", "args": ` + bash("touch shipped-y") + `}]},
				{"echo_settings": true}]}`))
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingProvider{p: p}
			s, err := Create(Options{SessionDir: t.TempDir(), Root: root, Mode: tt.mode, Ask: true,
				Provider:    func() (provider.Provider, error) { return rec, nil },
				CommandDirs: []command.Dir{{Path: dir, Root: root, Trusted: !tt.untrusted}}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			var mu sync.Mutex
			var asked, notices []string
			sub := s.Subscribe(func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				if e.Kind == KindPermission {
					var a struct{ Command string }
					_ = json.Unmarshal(e.Permission.Request.Args, &a)
					asked = append(asked, a.Command)
					e.Permission.Answer(agent.Reject)
				}
				if e.Kind == KindNotice {
					notices = append(notices, e.Text)
				}
			})
			defer sub.Close()
			if _, err := s.Submit(t.Context(), Input{Text: "/ship x", Where: Terminal}); err != nil {
				t.Fatal(err)
			}
			user := lastUser(t, s)
			model := attach.ModelText(user.Text, user.Content)
			if _, err := s.Submit(t.Context(), Input{Text: "again", Where: Terminal}); err != nil {
				t.Fatal(err)
			}
			sub.Flush(5 * time.Second)
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("asked about %q, want %q", asked, tt.asked)
			}
			var files []string
			for _, f := range []string{"body-x", "shipped-x", "shipped-y", "evil", "w.txt"} {
				if _, err := os.Stat(filepath.Join(root, f)); err == nil {
					files = append(files, f)
				}
			}
			if !slices.Equal(files, tt.files) {
				t.Errorf("files made: %q, want %q", files, tt.files)
			}
			ranBody := slices.Contains(tt.files, "body-x")
			if ranBody != strings.Contains(model, "Body said: made body-x\nShip x.") {
				t.Errorf("the prompt (body run: %v):\n%s", ranBody, model)
			}
			settings := rec.texts()
			if len(settings) != 2 || !strings.HasPrefix(settings[0], "model="+tt.model+" ") || strings.Contains(settings[0], ",write,") ||
				!strings.HasPrefix(settings[1], "model= ") || !strings.Contains(settings[1], ",write,") {
				t.Errorf("the turns' settings: %q; want the command's model %q and no write, then neither", settings, tt.model)
			}
			// The body's command is logged and shown, but the model has its
			// output once: in the prompt.
			if m := rec.first; len(m) != 1 || m[0].Role != provider.RoleUser || len(m[0].Parts) != 1 || m[0].Parts[0].Type != provider.PartText {
				t.Errorf("the first request's messages: %+v", m)
			}
			for _, n := range tt.notices {
				if !slices.ContainsFunc(notices, func(s string) bool { return strings.Contains(s, n) }) {
					t.Errorf("notices %q lack %q", notices, n)
				}
			}
		})
	}
}

// recordingProvider keeps the answers its script gave to echo_settings.
type recordingProvider struct {
	p     provider.Provider
	mu    sync.Mutex
	ts    []string
	first []provider.Message // the first request's messages
}

func (r *recordingProvider) Name() string { return r.p.Name() }

func (r *recordingProvider) Stream(ctx context.Context, req provider.Request, on func(provider.Delta)) (*provider.Response, error) {
	r.mu.Lock()
	if r.first == nil {
		r.first = req.Messages
	}
	r.mu.Unlock()
	resp, err := r.p.Stream(ctx, req, on)
	if err == nil && resp != nil {
		for _, part := range resp.Message.Parts {
			if strings.HasPrefix(part.Text, "model=") {
				r.mu.Lock()
				r.ts = append(r.ts, part.Text)
				r.mu.Unlock()
			}
		}
	}
	return resp, err
}

func (r *recordingProvider) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ts)
}

// A skill run by name: its SKILL.md body with $ARGUMENTS and
// ${CLAUDE_SKILL_DIR} expanded, saying where its folder is.
func TestSkillCommandExpands(t *testing.T) {
	root := t.TempDir()
	sd := filepath.Join(root, ".claude", "skills", "pdf")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte("---\nname: PDF Tools\ndescription: Fill forms: any PDF\nargument-hint: [file]\n---\nRun python ${CLAUDE_SKILL_DIR}/scripts/fill.py $ARGUMENTS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse([]byte(`{"turns": [{"echo_request": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(Options{SessionDir: t.TempDir(), Root: root, Provider: func() (provider.Provider, error) { return p, nil },
		SkillDirs: []skills.Dir{{Path: filepath.Join(root, ".claude", "skills"), Root: root, Trusted: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	c, ok := command.Find(s.CommandsFor(Editor), "pdf-tools")
	if !ok || c.ArgHint != "[file]" || c.Description != "PDF Tools: Fill forms: any PDF" {
		t.Fatalf("the skill's command: %+v", c)
	}
	if _, err := s.Submit(t.Context(), Input{Text: "/pdf-tools form.pdf", Where: Editor}); err != nil {
		t.Fatal(err)
	}
	user := lastUser(t, s)
	want := "Base directory for this skill: " + sd + " (run its scripts from there)\n\nRun python " + sd + "/scripts/fill.py form.pdf\n"
	if got := attach.ModelText(user.Text, user.Content); got != want {
		t.Errorf("the prompt:\n%s\nwant:\n%s", got, want)
	}
}

// allowed-tools: Write runs the command's writes unasked, but not one of a
// file that steers later sessions (.claude/settings.json): that is asked
// about whatever the command says.
func TestAllowedToolsNeverRisky(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".dsh", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note.md"), []byte("---\nallowed-tools: Write\n---\nWrite notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := script.Parse([]byte(`{"turns": [{"tool_calls": [{"name": "write", "args": {"path": "notes.txt", "content": "n"}},
		{"name": "write", "args": {"path": ".claude/settings.json", "content": "{}"}}]}, {"text": "done"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(Options{SessionDir: t.TempDir(), Root: root, Ask: true, Provider: func() (provider.Provider, error) { return p, nil },
		CommandDirs: []command.Dir{{Path: dir, Root: root, Trusted: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var mu sync.Mutex
	var asked []string
	sub := s.Subscribe(func(e Event) {
		if e.Kind == KindPermission {
			var a struct{ Path string }
			_ = json.Unmarshal(e.Permission.Request.Args, &a)
			mu.Lock()
			asked = append(asked, a.Path)
			mu.Unlock()
			e.Permission.Answer(agent.Reject)
		}
	})
	defer sub.Close()
	if _, err := s.Submit(t.Context(), Input{Text: "/note", Where: Terminal}); err != nil {
		t.Fatal(err)
	}
	sub.Flush(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{".claude/settings.json"}) {
		t.Errorf("asked about %q, want only the steering file", asked)
	}
	if _, err := os.Stat(filepath.Join(root, "notes.txt")); err != nil {
		t.Errorf("the approved write did not run: %v", err)
	}
}
