package host

import (
	"path/filepath"
	"strings"

	"github.com/dsh-dev/dsh/internal/command"
)

// Plugin is a Claude Code plugin the session uses: its commands, skills and
// agents are in the option's directories, namespaced NAME:…; its folder is
// what their ${CLAUDE_PLUGIN_ROOT} means.
type Plugin struct{ Name, Root string }

// expandVars are the ${NAME} a custom command's body may use: the project's
// folder, and its plugin's for a plugin's command.
func (s *Session) expandVars(c command.Command) map[string]string {
	vars := map[string]string{"CLAUDE_PROJECT_DIR": s.Root()}
	for _, p := range s.o.Plugins {
		if strings.HasPrefix(c.Name, p.Name+":") && strings.HasPrefix(c.Source, p.Root+string(filepath.Separator)) {
			vars["CLAUDE_PLUGIN_ROOT"] = p.Root
		}
	}
	return vars
}
