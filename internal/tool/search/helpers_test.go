package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/card"
	"github.com/dsh-dev/dsh/internal/tool"
	"github.com/dsh-dev/dsh/internal/workspace"
)

// tree writes files (path → content) under a new directory and returns it,
// symlinks resolved.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		abs := filepath.Join(root, p)
		dir := filepath.Dir(abs)
		if strings.HasSuffix(p, "/") {
			dir = abs
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, "/") {
			continue
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func envAt(t testing.TB, root string) tool.Env {
	t.Helper()
	ws, err := workspace.New(root, false)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Env{Session: tool.NewSession("test", ws)}
}

// call runs a tool through the framework, as a session does: arguments checked
// against the schema, meta encoded, the result card presented from the result.
func call(t testing.TB, tl tool.Tool, env tool.Env, args any) (tool.Result, *Meta, card.Result) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tl.Run(context.Background(), env, raw, nil)
	if err != nil {
		t.Fatalf("harness error: %v", err)
	}
	return r, tool.DecodeMeta[Meta](r.Meta), tl.PresentResult(raw, r)
}

// matchLines lists a grep meta's matching lines as "path:line".
func matchLines(m *Meta) []string {
	var out []string
	for _, f := range m.Files {
		for _, l := range f.Matches {
			if l.Ranges != nil {
				out = append(out, f.Path+":"+itoa(l.Line))
			}
		}
	}
	return out
}
