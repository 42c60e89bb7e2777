package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// write lays files (path → content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// env is a getenv with HOME at home and nothing else.
func env(home string) func(string) string {
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

// A plugin written for these tests in Claude Code's layout, with the
// manifest's custom paths, inline MCP servers and a hooks file.
var sample = map[string]string{
	".claude-plugin/plugin.json": `{"name": "tidy", "version": "0.3.0", "description": "tidies",
		"commands": ["./extra/one.md", "./more"], "agents": "./team", "hooks": "./cfg/more-hooks.json",
		"mcpServers": {"inline": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/srv", "args": ["--x=${TIDY_X:-dflt}"]}}}`,
	"commands/sweep.md":      "---\ndescription: sweep\n---\nSweep $ARGUMENTS",
	"extra/one.md":           "one",
	"more/two.md":            "two",
	"agents/a.md":            "---\nname: a\ndescription: d\n---\nx",
	"team/b.md":              "---\nname: b\ndescription: d\n---\nx",
	"skills/s/SKILL.md":      "---\nname: s\ndescription: d\n---\nx",
	"hooks/hooks.json":       `{"description": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]}}`,
	"cfg/more-hooks.json":    `{"hooks": {}}`,
	".mcp.json":              `{"mcpServers": {"db": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/db.js"], "env": {"K": "${TIDY_K}"}}, "web": {"url": "https://x.example/mcp"}}}`,
	"extra/not-a-plugin.txt": "",
}

func TestLoadReadsTheManifestAndItsPaths(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, sample)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(ps []string, errs []error) []string {
		t.Helper()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var out []string
		for _, x := range ps {
			r, _ := filepath.Rel(dir, x)
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	for _, tc := range []struct {
		what      string
		got, want []string
	}{
		{"commands", rel(p.CommandPaths()), []string{"commands", "extra/one.md", "more"}},
		{"agents", rel(p.AgentPaths()), []string{"agents", "team"}},
		{"skills", rel(p.SkillPaths()), []string{"skills"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
	docs, errs := p.Hooks()
	if len(errs) > 0 || len(docs) != 2 || !strings.Contains(string(docs[0].JSON), "stop.sh") {
		t.Errorf("hooks: %v %v", docs, errs)
	}
	servers, errs := p.MCPServers(func(k string) string { return map[string]string{"TIDY_K": "secret"}[k] })
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, s := range servers {
		got = append(got, s.Name+" "+s.Type+" "+s.Command+" "+strings.Join(s.Args, ",")+" "+s.URL+" "+s.Env["K"])
	}
	want := []string{
		"plugin_tidy_db stdio node " + dir + "/db.js  secret",
		"plugin_tidy_web http   https://x.example/mcp ",
		"plugin_tidy_inline stdio " + dir + "/bin/srv --x=dflt  ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("MCP servers:\n%q\nwant\n%q", got, want)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"no manifest", "", "not a plugin"},
		{"bad JSON", `{"name": `, "unexpected end"},
		{"bad name", `{"name": "Hook Development"}`, "want lowercase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.manifest != "" {
				write(t, dir, map[string]string{ManifestPath: tc.manifest})
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{ManifestPath: `{"name": "x", "commands": "../../etc"}`})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := p.CommandPaths(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "outside the plugin's folder") {
		t.Errorf("a path out of the plugin: %v", errs)
	}
}

// Claude Code's installations: which apply in a project, and whether they
// are enabled, as its settings say; dsh's word over them.
func TestFindClaudeCodes(t *testing.T) {
	home, proj, other := t.TempDir(), t.TempDir(), t.TempDir()
	cache := filepath.Join(home, ".claude", "plugins", "cache", "m")
	for _, n := range []string{"usr", "off", "proj", "elsewhere", "byproject"} {
		write(t, filepath.Join(cache, n), map[string]string{ManifestPath: `{"name": "` + n + `"}`})
	}
	at := func(n string) string { return filepath.Join(cache, n) }
	write(t, home, map[string]string{
		".claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {
			"usr@m": [{"scope": "user", "installPath": "` + at("usr") + `"}],
			"off@m": [{"scope": "user", "installPath": "` + at("off") + `"}],
			"proj@m": [{"scope": "project", "projectPath": "` + proj + `", "installPath": "` + at("proj") + `"}],
			"elsewhere@m": [{"scope": "local", "projectPath": "` + other + `", "installPath": "` + at("elsewhere") + `"}],
			"byproject@m": [{"scope": "user", "installPath": "` + at("byproject") + `"}]}}`,
		".claude/settings.json": `{"enabledPlugins": {"usr@m": true, "off@m": false}}`,
	})
	write(t, proj, map[string]string{
		".claude/settings.json": `{"enabledPlugins": {"proj@m": true, "byproject@m": true}}`,
	})
	got := func() []string {
		ps, err := Find(proj, env(home))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.ID+" "+p.From+" enabled="+strings.ToLower(boolWord(p.Enabled))+" project="+boolWord(p.Project))
		}
		return out
	}
	want := []string{
		"byproject@m claude enabled=yes project=yes",
		"off@m claude enabled=no project=no",
		"proj@m claude enabled=yes project=yes",
		"usr@m claude enabled=yes project=no",
	}
	if g := got(); !slices.Equal(g, want) {
		t.Errorf("found\n%q\nwant\n%q", g, want)
	}
	if _, err := SetEnabled(env(home), proj, "off@m", true); err != nil {
		t.Fatal(err)
	}
	if _, err := SetEnabled(env(home), proj, "usr", false); err != nil {
		t.Fatal(err)
	}
	want[1], want[3] = "off@m claude enabled=yes project=no", "usr@m claude enabled=no project=no"
	if g := got(); !slices.Equal(g, want) {
		t.Errorf("after enable and disable\n%q\nwant\n%q", g, want)
	}
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// bare makes a local bare repository holding files, as a git URL stands in
// for a remote one.
func bare(t *testing.T, files map[string]string) string {
	t.Helper()
	work, dest := t.TempDir(), filepath.Join(t.TempDir(), "repo.git")
	write(t, work, files)
	git(t, work, "init", "-q", "-b", "main")
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "x")
	git(t, work, "clone", "-q", "--bare", work, dest)
	return dest
}

func TestAddListRemove(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ge := env(home)
	ctx := context.Background()
	local := t.TempDir()
	write(t, local, map[string]string{ManifestPath: `{"name": "here"}`})
	repo := bare(t, map[string]string{ManifestPath: `{"name": "cloned"}`, "commands/c.md": "c"})
	market := bare(t, map[string]string{
		MarketPath:                       `{"name": "shop", "owner": {"name": "t"}, "plugins": [{"name": "inside", "source": "./plugins/inside"}, {"name": "remote", "source": {"source": "url", "url": "` + repo + `"}}]}`,
		"plugins/inside/" + ManifestPath: `{"name": "inside"}`,
	})
	steps := []struct {
		what string
		do   func() error
	}{
		{"add a folder", func() error { _, err := Add(ctx, ge, local); return err }},
		{"add a git URL", func() error { _, err := Add(ctx, ge, "file://"+repo); return err }},
		{"add a marketplace", func() error { _, _, err := AddMarketplace(ctx, ge, market); return err }},
		{"install from its folder", func() error { _, err := Add(ctx, ge, "inside@shop"); return err }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
	}
	// remote@shop names the same repository as cloned: one name, one plugin.
	if _, err := Add(ctx, ge, "remote@shop"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second clone of one plugin: %v", err)
	}
	for _, tc := range []struct{ src, want string }{
		{local, "is added already"},
		{"nothing@shop", "has no plugin nothing"},
		{"x@nowhere", "no marketplace nowhere"},
		{filepath.Join(t.TempDir(), "missing"), "neither a plugin folder"},
	} {
		if _, err := Add(ctx, ge, tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("add %s: %v, want %q", tc.src, err, tc.want)
		}
	}
	ps, err := Find("", ge)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	if want := []string{"here", "cloned", "inside@shop"}; !slices.Equal(ids, want) {
		t.Errorf("found %v, want %v", ids, want)
	}
	if err := RemoveMarketplace(ge, "shop"); err == nil || !strings.Contains(err.Error(), "inside@shop is used from") {
		t.Errorf("removing a marketplace a plugin is used from: %v", err)
	}
	clone := ps[1].Root
	for _, id := range []string{"cloned", "inside"} {
		if _, err := Remove(ge, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(clone); !os.IsNotExist(err) {
		t.Errorf("the clone is still there: %v", err)
	}
	if err := RemoveMarketplace(ge, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(ge, "cloned"); err == nil {
		t.Error("removed a plugin twice")
	}
}

func TestGitURL(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"local/" + ManifestPath: `{"name": "l"}`})
	for _, tc := range []struct {
		src, want string
		ok        bool
	}{
		{"https://example.com/p.git", "https://example.com/p.git", true},
		{"git@example.com:team/p.git", "git@example.com:team/p.git", true},
		{"file:///srv/p.git", "file:///srv/p.git", true},
		{"owner/repo", "https://github.com/owner/repo.git", true},
		{"ext::sh -c touch% /tmp/x", "", false},
		{filepath.Join(dir, "local"), "", false},
		{"plain-name", "", false},
	} {
		got, ok := gitURL(tc.src)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %q %v, want %q %v", tc.src, got, ok, tc.want, tc.ok)
		}
	}
}
