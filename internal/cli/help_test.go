package cli

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/dsh-dev/dsh/internal/agent"
	"github.com/dsh-dev/dsh/internal/session"
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

// A mistake on the command line is answered with what was wrong and where the
// help is, not the help itself; a misspelt command with the one meant.
func TestMistakesAreShort(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sesions"}, `dsh: unknown command "sesions"; did you mean "sessions"?` + "\nRun 'dsh --help' for the commands.\n"},
		{[]string{"frobnicate"}, `dsh: unknown command "frobnicate"` + "\nRun 'dsh --help' for the commands.\n"},
		{[]string{"run", "--mode", "yolo", "hi"}, "Run 'dsh run --help' for its usage and flags.\n"},
		{[]string{"run", "--no-such-flag", "hi"}, "Run 'dsh run --help' for its usage and flags.\n"},
	} {
		var out, errb strings.Builder
		if code := Main(tc.args, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if e := errb.String(); !strings.HasSuffix(e, tc.want) || strings.Count(e, "\n") > 2 {
			t.Errorf("%v printed\n%s\nwant at most two lines ending %q", tc.args, e, tc.want)
		}
	}
}

// The exit hint offers dsh -c only for the session -c would open.
func TestGoOnHint(t *testing.T) {
	list := func(ids ...string) func() ([]session.Info, error) {
		return func() ([]session.Info, error) {
			var out []session.Info
			for _, id := range ids {
				out = append(out, session.Info{ID: id})
			}
			return out, nil
		}
	}
	for _, tc := range []struct {
		name, id string
		list     func() ([]session.Info, error)
		want     string
	}{
		{"the newest", "b", list("b", "a"), "session b — go on with: dsh -c   (or dsh --resume b)"},
		{"an older one, resumed", "a", list("b", "a"), "session a — go on with: dsh --resume a"},
		{"no list", "a", func() ([]session.Info, error) { return nil, errors.New("unreadable") }, "session a — go on with: dsh --resume a"},
	} {
		if got := goOnHint(tc.id, tc.list); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
