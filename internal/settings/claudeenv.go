package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/claudehome"
	"github.com/dsh-dev/dsh/internal/provider/providers"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// claudeSettings is what dsh takes, beside what package config does (rules,
// hooks, defaultMode), of Claude Code's settings files: the user's
// (~/.claude/settings.json) and the project's (.claude/settings.json,
// .claude/settings.local.json), each read once for a session.
type claudeSettings struct {
	path string // the user's file
	// vars is the user's env: the variables Claude Code applies to every
	// session, where its users often choose their cloud, region and model.
	// They stand over the process's environment, as there. A project's env
	// is not read: a repository's file must not choose where the keys go.
	vars map[string]string
	// model is the first "model" of the project's local settings, its
	// settings, the user's, as Claude Code reads them; modelFrom its file.
	model, modelFrom string
	// declined are the servers of .mcp.json the user declined
	// (disabledMcpjsonServers), in any of the three.
	declined []string
	// helpers are the user's credential helpers, apiKeyHelper (a command
	// whose output is the Anthropic key) and awsCredentialExport (Bedrock's
	// credentials), by the variable that carries each to the runner. A
	// project's are not read: they would run the repository's code and
	// choose where the keys go.
	helpers map[string]string
	// statusLine is the first statusLine command of the project's local
	// settings and its settings, which runs only in a trusted project, and
	// userStatusLine the user's.
	statusLine, userStatusLine string
}

// readClaudeSettings reads Claude Code's settings files for a session in root;
// notice says what of the user's could not be used. A project's file that
// cannot be read gives nothing here (package config says why).
func readClaudeSettings(root string, getenv func(string) string) (c claudeSettings, notice string) {
	type fields struct {
		Env      map[string]any `json:"env"`
		Model    string         `json:"model"`
		Declined []string       `json:"disabledMcpjsonServers"`
		Helper   string         `json:"apiKeyHelper"`
		Export   string         `json:"awsCredentialExport"`
		Status   struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		} `json:"statusLine"`
	}
	var docs []fields
	var froms []string
	for _, name := range []string{"settings.local.json", "settings.json"} {
		rel := filepath.Join(".claude", name)
		var f fields
		if b, more, err := workspace.ReadProjectFile(root, rel, maxMCPJSON); err == nil && !more && json.Unmarshal(b, &f) == nil {
			f.Env, f.Helper, f.Export = nil, "", "" // the user's alone
			docs, froms = append(docs, f), append(froms, filepath.Join(root, rel))
		}
	}
	if d := claudehome.Dir(getenv); d != "" {
		c.path = filepath.Join(d, "settings.json")
		b, more, err := workspace.ReadOwnFile(c.path, maxMCPJSON)
		var f fields
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			notice = fmt.Sprintf("%v: its env is not used", err)
		case more:
			notice = fmt.Sprintf("%s is larger than %d KiB: its env is not used", c.path, maxMCPJSON>>10)
		default:
			if err := json.Unmarshal(b, &f); err != nil {
				notice = fmt.Sprintf("%s: %v: its env is not used", c.path, err)
			} else {
				docs, froms = append(docs, f), append(froms, c.path)
			}
		}
	}
	for i, f := range docs {
		if m := strings.TrimSpace(f.Model); m != "" && c.model == "" {
			c.model, c.modelFrom = m, froms[i]
		}
		if cmd := strings.TrimSpace(f.Status.Command); cmd != "" && f.Status.Type == "command" {
			switch {
			case froms[i] == c.path:
				c.userStatusLine = cmd
			case c.statusLine == "":
				c.statusLine = cmd
			}
		}
		c.declined = append(c.declined, f.Declined...)
		for k, v := range map[string]string{providers.KeyHelperEnv: f.Helper, providers.CredentialExportEnv: f.Export} {
			if v = strings.TrimSpace(v); v != "" {
				if c.helpers == nil {
					c.helpers = map[string]string{}
				}
				c.helpers[k] = v
			}
		}
		for k, v := range f.Env {
			var val string
			switch v := v.(type) {
			case string:
				val = v
			case float64, bool: // Claude Code takes "1" and 1 alike
				val = fmt.Sprint(v)
			default:
				continue
			}
			if c.vars == nil {
				c.vars = map[string]string{}
			}
			c.vars[k] = val
		}
	}
	return c, notice
}

// over is getenv with c's variables over it, and its helpers, for the
// runner, where the environment names none.
func (c claudeSettings) over(getenv func(string) string) func(string) string {
	if len(c.vars) == 0 && len(c.helpers) == 0 {
		return getenv
	}
	return func(k string) string {
		if v, ok := c.vars[k]; ok {
			return v
		}
		if v := getenv(k); v != "" {
			return v
		}
		return c.helpers[k]
	}
}
