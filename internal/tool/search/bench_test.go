package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/dsh-dev/dsh/internal/tool"
)

// goSrc is the Go toolchain's source tree, the benchmark corpus of bench/search.sh.
func goSrc(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	dir := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, serr := os.Stat(filepath.Join(dir, "go.mod")); err != nil || serr != nil {
		b.Skip("no GOROOT/src here")
	}
	return dir
}

func benchTool(b *testing.B, t tool.Tool, args any) {
	root := goSrc(b)
	env := envAt(b, root)
	raw, _ := json.Marshal(args)
	for b.Loop() {
		r, err := t.Run(context.Background(), env, raw, nil)
		if err != nil || r.IsError {
			b.Fatalf("%v %s", err, r.TextOf())
		}
	}
}

func BenchmarkGrepLiteral(b *testing.B) { benchTool(b, Grep(), GrepParams{Pattern: "func main"}) }
func BenchmarkGrepRegex(b *testing.B) {
	benchTool(b, Grep(), GrepParams{Pattern: `func \([a-z]+ \*[A-Za-z]+\) Close\(`})
}
func BenchmarkGrepIgnoreCase(b *testing.B) {
	benchTool(b, Grep(), GrepParams{Pattern: "deprecated", IgnoreCase: true})
}
func BenchmarkGrepFiles(b *testing.B) {
	benchTool(b, Grep(), GrepParams{Pattern: "context.Context", Output: outFiles})
}
func BenchmarkGlob(b *testing.B) { benchTool(b, Glob(), GlobParams{Pattern: "**/*_test.go"}) }
