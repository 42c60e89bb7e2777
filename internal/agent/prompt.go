package agent

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/dsh-dev/dsh/internal/tool"
)

//go:embed system.md
var systemText string

// systemTmpl is parsed on first use, not at every dsh start-up.
var systemTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("system").Parse(systemText))
})

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
	var b strings.Builder
	err := systemTmpl().Execute(&b, struct {
		Root, Platform, Date, Instructions string
		Guidance                           []string
	}{
		Root:         p.Root,
		Platform:     p.Platform,
		Date:         p.Date.Format("2006-01-02 (Monday)"),
		Instructions: strings.TrimSpace(p.Instructions),
		Guidance:     p.Guidance,
	})
	if err != nil {
		panic(fmt.Sprintf("system prompt template: %v", err)) // the template is embedded; a test executes it
	}
	return b.String()
}

// instructionFiles are the project instruction files, in order of preference.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// LoadInstructions returns the project's instructions: AGENTS.md at the workspace
// root, else CLAUDE.md, else "".
func LoadInstructions(root string) (string, error) {
	for _, name := range instructionFiles {
		b, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("project instructions: %w", err)
		}
		return string(b), nil
	}
	return "", nil
}
