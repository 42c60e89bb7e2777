package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// npmBin finds an npm reference server; .ci/run installs them into
// $DSH_TEST_NPM (default ~/.cache/dsh-test-npm) and sets DSH_REQUIRE_MCP=1.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("DSH_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		msg := "npm reference server " + name + " is not installed (" + bin + ")"
		if os.Getenv("DSH_REQUIRE_MCP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// TestRunHasConfigMCP: the config's [mcp.NAME] servers are started for dsh
// run too (by the host), and their tools reach the model.
func TestRunHasConfigMCP(t *testing.T) {
	bin := npmBin(t, "mcp-server-everything")
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "XDG_STATE_HOME": filepath.Join(dir, "state"),
		"PATH": os.Getenv("PATH")}
	write := func(path, text string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "xdg", "dsh", "config.toml"), "[mcp.everything]\ncommand = \""+bin+"\"\nargs = [\"stdio\"]\n")
	script := filepath.Join(dir, "echo.json")
	write(script, `{"turns": [{"echo_settings": true}]}`)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	io := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Cwd: work, Now: time.Now,
		Getenv: func(k string) string { return env[k] }}
	if code := Main([]string{"run", "--script", script, "--session-dir", filepath.Join(dir, "sessions"), "--output", "json", "hi"}, io); code != 0 {
		t.Fatalf("dsh run exited %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "mcp__everything__echo") {
		t.Errorf("the model was not offered the config's MCP tools:\n%s\n%s", out.String(), errb.String())
	}
}

// TestMCPScripts runs the scripts in testdata/mcpscript, which use npm's
// reference servers: their bin directory is on PATH, so a config names them
// as commands.
func TestMCPScripts(t *testing.T) {
	bin := filepath.Dir(npmBin(t, "mcp-server-everything"))
	testscript.Run(t, testscript.Params{
		Dir: "testdata/mcpscript",
		Setup: func(e *testscript.Env) error {
			e.Setenv("XDG_STATE_HOME", e.WorkDir+"/state")
			e.Setenv("NO_COLOR", "1")
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			return nil
		},
	})
}
