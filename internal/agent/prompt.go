package agent

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// The system prompt's text, with {{.Name}} placeholders that SystemPrompt
// fills in one pass (a value is never scanned for placeholders). It is not a
// text/template: executing one makes the linker keep every exported method of
// every type in the binary (text/template calls methods by name), which costs
// dsh a third of its size.
var (
	//go:embed system.md
	systemText string
	// instructionsText is the section for the project's instructions, left out
	// when there are none.
	//go:embed instructions.md
	instructionsText string
)

// PromptInfo is what the system prompt says about the session.
type PromptInfo struct {
	Root     string    // the workspace root
	Platform string    // e.g. "linux/amd64"
	Date     time.Time // today, in the user's zone
	// Instructions is the project's own guidance (AGENTS.md or CLAUDE.md), or "".
	Instructions string
	// Guidance is each offered tool's paragraph, in registry order.
	Guidance []string
}

// SessionPrompt is the system prompt of a session in root that offers reg's tools,
// on this platform, today. Project instructions that cannot be read are left out
// and the error says why; the prompt is usable either way.
func SessionPrompt(root string, reg *tool.Registry, now time.Time) (string, error) {
	instructions, err := LoadInstructions(root)
	var guidance []string
	for _, t := range reg.Tools() {
		if g := strings.TrimSpace(t.Guidance()); g != "" {
			guidance = append(guidance, g)
		}
	}
	return SystemPrompt(PromptInfo{Root: root, Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Date: now, Instructions: instructions, Guidance: guidance}), err
}

// SystemPrompt writes the system prompt for a session.
func SystemPrompt(p PromptInfo) string {
	var guidance strings.Builder
	for _, g := range p.Guidance {
		guidance.WriteString("\n" + g)
	}
	instructions := ""
	if s := strings.TrimSpace(p.Instructions); s != "" {
		instructions = strings.Replace(instructionsText, "{{.Instructions}}", s, 1)
	}
	value := func(name string) (string, bool) {
		switch name {
		case "Root":
			return p.Root, true
		case "Platform":
			return p.Platform, true
		case "Date":
			return p.Date.Format("2006-01-02 (Monday)"), true
		case "Guidance":
			return guidance.String(), true
		case "Instructions":
			return instructions, true
		}
		return "", false
	}
	// One pass by hand: a strings.Replacer of these five built its lookup
	// tables on every session/new, for a single use.
	var b strings.Builder
	b.Grow(len(systemText) + len(p.Root) + guidance.Len() + len(instructions) + 64)
	rest := systemText
	for {
		before, after, found := strings.Cut(rest, "{{.")
		b.WriteString(before)
		if !found {
			return b.String()
		}
		name, tail, closed := strings.Cut(after, "}}")
		v, known := value(name)
		if !closed || !known {
			b.WriteString("{{.")
			rest = after
			continue
		}
		b.WriteString(v)
		rest = tail
	}
}

// instructionFiles are the project instruction files, in order of preference.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// MaxInstructions caps the bytes of the root's instructions in the system prompt,
// which every request carries.
const MaxInstructions = 64 << 10

// LoadInstructions returns the project's instructions: AGENTS.md at the workspace
// root, else CLAUDE.md, else "" — at most MaxInstructions bytes of it. A file
// that is not a regular file inside the root (a symlink to ~/.ssh/id_rsa or
// /dev/zero) is not read, and the error says so.
func LoadInstructions(root string) (string, error) {
	for _, name := range instructionFiles {
		b, more, err := workspace.ReadProjectFile(root, name, MaxInstructions)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err // the caller says these are the project instructions
		}
		return capped(b, more, MaxInstructions), nil
	}
	return "", nil
}

// MaxNestedInstructions caps the bytes of one nested instructions file that go
// into the context: a repository can make the file as large as it likes.
const MaxNestedInstructions = 32 << 10

// nestedInstructions runs after a call's result is logged: for each file the
// call touched (its tool says which) and each directory between the workspace
// root and that file, outermost first, whose AGENTS.md (or CLAUDE.md) is not in
// the context yet, it logs the file as an instructions record, which the
// builder adds to the context.
func (a *Agent) nestedInstructions(c call, res tool.Result) error {
	if c.tool == nil || res.IsError || a.c.Tools == nil || a.c.Tools.Workspace == nil {
		return nil
	}
	ws := a.c.Tools.Workspace
	for _, file := range c.tool.Touched(c.args, res) {
		for _, dir := range nestedDirs(ws, file) {
			a.mu.Lock()
			seen := a.nested[dir]
			a.mu.Unlock()
			if seen {
				continue
			}
			path, text, ok := loadNested(ws.Root(), dir)
			if !ok {
				continue
			}
			if err := a.record(session.Record{Type: session.TypeInstructions, Path: path, Text: text}); err != nil {
				return fmt.Errorf("log instructions: %w", err)
			}
		}
	}
	return nil
}

// nestedDirs are the directories, relative to the root, from the root's child
// that holds file down to file's own directory; none for a file outside the
// workspace or directly in the root (whose instructions are in the system prompt).
func nestedDirs(ws *workspace.Workspace, file string) []string {
	if !filepath.IsAbs(file) {
		return nil
	}
	file = filepath.Clean(file)
	if file == ws.Root() || !ws.Contains(file) {
		return nil
	}
	rel, err := filepath.Rel(ws.Root(), filepath.Dir(file))
	if err != nil || rel == "." {
		return nil
	}
	var dirs []string
	for d := rel; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	return dirs
}

// loadNested reads dir's instructions file (relative to root): its path
// relative to root and its text, capped at MaxNestedInstructions. A file that is
// missing, empty, not regular, or that resolves (through a symlinked file or
// directory) outside root is not loaded.
func loadNested(root, dir string) (string, string, bool) {
	for _, name := range instructionFiles {
		rel := filepath.Join(dir, name)
		b, more, err := workspace.ReadProjectFile(root, rel, MaxNestedInstructions)
		if err != nil {
			continue
		}
		if text := capped(b, more, MaxNestedInstructions); strings.TrimSpace(text) != "" {
			return rel, text, true
		}
	}
	return "", "", false
}

// capped is the text of a file read up to limit bytes (cut at a character
// boundary), saying so when there was more.
func capped(b []byte, more bool, limit int) string {
	if !more {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	// Drop the start of a character the cut split.
	for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD") + fmt.Sprintf("\n\n[… the file is longer than %d KiB; the rest was left out]", limit>>10)
}

// instructionsPart is the context's text for an instructions record.
func instructionsPart(r session.Record) provider.Part {
	dir := filepath.Dir(r.Path)
	return provider.Part{Type: provider.PartText, Text: fmt.Sprintf(
		"<project-instructions path=%q>\nThese instructions come from the project's %s and apply to the files under %s/; "+
			"where they differ from the root's, they take precedence there.\n\n%s\n</project-instructions>",
		r.Path, r.Path, dir, strings.TrimSpace(r.Text))}
}
