package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/lsp"
	"github.com/dsh-dev/dsh/internal/proctest"
	"github.com/dsh-dev/dsh/internal/session"
	"github.com/dsh-dev/dsh/internal/tool"
)

// A session's edit carries gopls's diagnostics in its logged result, which
// replays into the same diff card, and closing the session ends gopls and
// everything it started.
func TestSessionDiagnostics(t *testing.T) {
	dir := os.Getenv("DSH_TEST_GO")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "dsh-test-go")
	}
	bin := filepath.Join(dir, "bin", "gopls")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("DSH_REQUIRE_LSP") == "1" {
			t.Fatal("gopls is not installed: " + bin)
		}
		t.Skip("gopls is not installed: " + bin)
	}
	root := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module m\n\ngo 1.22\n", "m.go": "package m\n\nvar X int = 1\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := options(t, root, t.TempDir(), nil)
	o.LSP = lsp.Config{Servers: map[string]lsp.Server{"go": {Command: []string{bin}}}, Trust: lsp.NewTrust(true, false, nil, "")}
	s, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := context.Background()
	if r, err := s.RunTool(ctx, "read", []byte(`{"path":"m.go"}`)); err != nil || r.IsError {
		t.Fatalf("read: %v %s", err, r.TextOf())
	}
	args := []byte(`{"path":"m.go","old_string":"= 1","new_string":"= \"one\""}`)
	r, err := s.RunTool(ctx, "edit", args)
	if err != nil || r.IsError {
		t.Fatalf("edit: %v %s", err, r.TextOf())
	}
	if !strings.Contains(r.TextOf(), "m.go:3:") {
		t.Errorf("the model is not told of the type error: %s", r.TextOf())
	}
	pids := lsp.From(s.tools).Pids()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pg := range pids {
		proctest.GroupGone(t, pg)
	}
	if len(pids) != 1 {
		t.Errorf("gopls process groups %v, want one", pids)
	}
	// Replay: the logged result presents the card with the diagnostic.
	recs, err := session.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	var res *tool.Result
	for _, rec := range recs {
		if rec.Type == session.TypeToolResult {
			res = rec.Result
		}
	}
	if res == nil {
		t.Fatal("no result logged")
	}
	c, ok := s.Registry().PresentResult("edit", args, *res).(*card.DiffResult)
	if !ok || len(c.Diagnostics) == 0 || c.Diagnostics[0].Line != 3 || c.Diagnostics[0].Severity != card.SeverityError {
		b, _ := json.Marshal(c)
		t.Errorf("replayed card = %s", b)
	}
}
