package settings

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agents"
	"github.com/dsh-dev/dsh/internal/command"
	"github.com/dsh-dev/dsh/internal/skills"
)

// A plugin's hooks and MCP servers run as the project's own would: a plugin
// the user enabled everywhere, always; one the project enabled, only in a
// trusted project; no hooks with disableAllHooks. Its commands, skills and
// agents come namespaced either way.
func TestPluginsFollowTrust(t *testing.T) {
	for _, tc := range []struct {
		name               string
		userEnables        bool // the user's settings enable it, else the project's
		trusted            bool
		off                bool // the user's settings have disableAllHooks
		wantHooks, wantMCP bool
	}{
		{"the user's, untrusted project", true, false, false, true, true},
		{"the project's, untrusted", false, false, false, false, false},
		{"the project's, trusted", false, true, false, true, true},
		{"the user's, hooks off", true, false, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			proj, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
			plug := filepath.Join(home, ".claude", "plugins", "cache", "m", "tidy", "1.0.0")
			files := map[string]string{
				filepath.Join(plug, ".claude-plugin", "plugin.json"):                `{"name": "tidy", "commands": ["./extra/one.md"]}`,
				filepath.Join(plug, "extra", "one.md"):                              "One.",
				filepath.Join(plug, "commands", "sweep.md"):                         "Sweep with ${CLAUDE_PLUGIN_ROOT}/x",
				filepath.Join(plug, "skills", "s", "SKILL.md"):                      "---\nname: s\ndescription: d\n---\n",
				filepath.Join(plug, "agents", "a.md"):                               "---\nname: a\ndescription: d\n---\n",
				filepath.Join(plug, "hooks", "hooks.json"):                          `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/stop.sh\""}]}]}}`,
				filepath.Join(plug, ".mcp.json"):                                    `{"srv": {"command": "${CLAUDE_PLUGIN_ROOT}/srv"}}`,
				filepath.Join(home, ".claude", "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {"tidy@m": [{"scope": "user", "installPath": "` + plug + `"}]}}`,
				filepath.Join(proj, "README"):                                       "",
			}
			enable := `{"enabledPlugins": {"tidy@m": true}}`
			if tc.off {
				enable = `{"enabledPlugins": {"tidy@m": true}, "disableAllHooks": true}`
			}
			if tc.userEnables {
				files[filepath.Join(home, ".claude", "settings.json")] = enable
			} else {
				files[filepath.Join(proj, ".claude", "settings.json")] = enable
			}
			if tc.trusted {
				files[filepath.Join(home, ".config", "dsh", "config.toml")] = "trusted_projects = [\"" + proj + "\"]\n"
			}
			for p, c := range files {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": home}
			st, err := Resolve(context.Background(), Input{Cwd: proj, Getenv: func(k string) string { return env[k] }, SessionDir: filepath.Join(dir, "s"), NoModel: true})
			if err != nil {
				t.Fatal(err)
			}
			o := st.Options()
			var hooks []string
			for _, h := range o.Hooks {
				hooks = append(hooks, h.Command+" "+strings.Join(h.Env, ","))
			}
			if want := []string{`"${CLAUDE_PLUGIN_ROOT}/stop.sh" CLAUDE_PLUGIN_ROOT=` + plug}; tc.wantHooks != slices.Equal(hooks, want) {
				t.Errorf("hooks %q (want them: %v)", hooks, tc.wantHooks)
			}
			var servers []string
			for _, s := range o.MCP {
				servers = append(servers, s.Name+" "+s.Command)
			}
			if want := []string{"plugin_tidy_srv " + plug + "/srv"}; tc.wantMCP != slices.Equal(servers, want) {
				t.Errorf("MCP servers %q (want them: %v)", servers, tc.wantMCP)
			}
			told := strings.Contains(strings.Join(st.Ignored(), "\n"), "plugin tidy@m: hooks and MCP servers ignored")
			if told != (!tc.wantHooks && !tc.off) {
				t.Errorf("notices %q", st.Ignored())
			}
			last := func(n int) int { return n - 1 }
			if c := o.CommandDirs[last(len(o.CommandDirs))-1]; c.Namespace != "tidy" || c.Path != filepath.Join(plug, "commands") {
				t.Errorf("command dirs end %+v", c)
			}
			if d := o.SkillDirs[last(len(o.SkillDirs))]; d.Namespace != "tidy" {
				t.Errorf("skill dirs end %+v", d)
			}
			if d := o.AgentDirs[last(len(o.AgentDirs))]; d.Namespace != "tidy" {
				t.Errorf("agent dirs end %+v", d)
			}
			if v := o.CommandDirs[len(o.CommandDirs)-1].Vars["CLAUDE_PLUGIN_ROOT"]; v != plug {
				t.Errorf("the commands' CLAUDE_PLUGIN_ROOT is %q", v)
			}
			// The loaders name them as Claude Code does.
			var names []string
			cmds, _ := command.All(o.CommandDirs)
			for _, c := range cmds {
				names = append(names, "/"+c.Name)
			}
			sk, _ := skills.All(o.SkillDirs)
			for _, s := range sk {
				names = append(names, "skill "+s.Name)
			}
			ag, _ := agents.All(o.AgentDirs)
			for _, a := range ag {
				names = append(names, "agent "+a.Name)
			}
			if want := []string{"/tidy:one", "/tidy:sweep", "skill tidy:s", "agent tidy:a"}; !slices.Equal(names, want) {
				t.Errorf("names %q, want %q", names, want)
			}
		})
	}
}
