package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// claudeEnv is the env of the user's Claude Code settings
// (~/.claude/settings.json): the variables Claude Code applies to every
// session, where its users often choose their cloud, region and model. They
// stand over the process's environment, as there. A project's env is not
// read: a repository's file must not choose where the keys go.
type claudeEnv struct {
	path string
	vars map[string]string
}

func readClaudeEnv(getenv func(string) string) (e claudeEnv, notice string) {
	c := claudehome.Dir(getenv)
	if c == "" {
		return e, ""
	}
	e.path = filepath.Join(c, "settings.json")
	b, more, err := workspace.ReadOwnFile(e.path, maxMCPJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return e, ""
	case err != nil:
		return e, fmt.Sprintf("%v: its env is not used", err)
	case more:
		return e, fmt.Sprintf("%s is larger than %d KiB: its env is not used", e.path, maxMCPJSON>>10)
	}
	var s struct {
		Env map[string]any `json:"env"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return e, fmt.Sprintf("%s: %v: its env is not used", e.path, err)
	}
	for k, v := range s.Env {
		var val string
		switch v := v.(type) {
		case string:
			val = v
		case float64, bool: // Claude Code takes "1" and 1 alike
			val = fmt.Sprint(v)
		default:
			continue
		}
		if e.vars == nil {
			e.vars = map[string]string{}
		}
		e.vars[k] = val
	}
	return e, ""
}

// over is getenv with e's variables over it.
func (e claudeEnv) over(getenv func(string) string) func(string) string {
	if len(e.vars) == 0 {
		return getenv
	}
	return func(k string) string {
		if v, ok := e.vars[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// claudeSettingsModel is the model Claude Code's settings choose, and the
// file that does: the project's local settings, else its settings, else the
// user's, as Claude Code reads them.
func claudeSettingsModel(root string, getenv func(string) string) (model, path string) {
	type file struct{ root, rel string }
	var files []file
	for _, name := range []string{"settings.local.json", "settings.json"} {
		files = append(files, file{root, filepath.Join(".claude", name)})
	}
	if c := claudehome.Dir(getenv); c != "" {
		files = append(files, file{"", filepath.Join(c, "settings.json")})
	}
	for _, f := range files {
		var b []byte
		var more bool
		var err error
		if f.root != "" {
			b, more, err = workspace.ReadProjectFile(f.root, f.rel, maxMCPJSON)
		} else {
			b, more, err = workspace.ReadOwnFile(f.rel, maxMCPJSON)
		}
		if err != nil || more {
			continue
		}
		var s struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(b, &s) == nil && strings.TrimSpace(s.Model) != "" {
			return strings.TrimSpace(s.Model), filepath.Join(f.root, f.rel)
		}
	}
	return "", ""
}
