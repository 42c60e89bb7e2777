package cli

import (
	"flag"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/toolset"
)

// TestHelpListsEverything: dsh --help names every flag the chat parses and
// every mode; each command's --mode help names every mode.
func TestHelpListsEverything(t *testing.T) {
	var out, errb strings.Builder
	if code := Main([]string{"--help"}, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}); code != 0 {
		t.Fatalf("dsh --help exited %d: %s", code, errb.String())
	}
	help := out.String()
	fs := flag.NewFlagSet("dsh", flag.ContinueOnError)
	var o sessionFlags
	o.register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		if !strings.Contains(help, "  "+dash+f.Name) && !strings.Contains(help, " "+dash+f.Name+" ") {
			t.Errorf("dsh --help omits %s%s", dash, f.Name)
		}
	})
	for _, cmd := range []string{"", "run", "acp", "config"} {
		var out, errb strings.Builder
		args := []string{"--help"}
		if cmd != "" {
			args = []string{cmd, "--help"}
		}
		Main(args, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		text := out.String()
		for _, m := range agent.Modes {
			if !strings.Contains(text, string(m)) {
				t.Errorf("dsh %s --help omits the mode %s", cmd, m)
			}
		}
		for _, name := range []string{"-thinking", "-sandbox", "-mode", "-model", "-provider", "-base-url"} {
			if !strings.Contains(text, name) {
				t.Errorf("dsh %s --help omits %s", cmd, name)
			}
		}
	}
}

// dsh tool --help lists every tool, though a run of one call builds the list
// only when the help is printed.
func TestToolHelpListsTheTools(t *testing.T) {
	var out, errb strings.Builder
	Main([]string{"tool", "--help"}, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	for _, tl := range toolset.New(toolset.Options{}).Tools() {
		if !strings.Contains(out.String(), tl.Name()) {
			t.Errorf("dsh tool --help omits %s:\n%s", tl.Name(), out.String())
		}
	}
	if !strings.Contains(out.String(), "Tools: ") {
		t.Errorf("dsh tool --help has no tool list:\n%s", out.String())
	}
}
