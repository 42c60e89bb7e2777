package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLSP(t *testing.T) {
	w := newWorld(t, `
[lsp]
wait = "5s"

[lsp.go]
command = ["/opt/gopls", "-remote=auto"]

[lsp.python]
enabled = false
`, `
[lsp.rust]
enabled = false
`)
	c := w.load()
	want := LSP{Wait: 5 * time.Second, Servers: map[string]LSPServer{
		"go": {Command: []string{"/opt/gopls", "-remote=auto"}}, "python": {Disabled: true}}}
	if diff := cmp.Diff(want, c.LSP); diff != "" {
		t.Errorf("lsp (-want +got):\n%s", diff)
	}
	if got := settings(c)["lsp"]; got.Value != "wait 5s; go: /opt/gopls -remote=auto; python: off" || got.Source != w.userPath() {
		t.Errorf("lsp setting = %+v", got)
	}
	// An untrusted project may not choose programs to run.
	if len(c.Notices) != 1 || !strings.Contains(c.Notices[0], "lsp ignored") {
		t.Errorf("notices = %q", c.Notices)
	}
	for _, bad := range []string{"[lsp]\nwait = \"forever\"\n", "[lsp]\nwait = \"2h\"\n", "[lsp.go]\ncommand = []\n", "[lsp.cobol]\nenabled = false\n"} {
		w := newWorld(t, bad, "")
		if _, err := Load(w.project, w.getenv); err == nil || !strings.Contains(err.Error(), "lsp") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
