package bash

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPresentersArePure keeps the presenters' files free of I/O: they run on
// replay and must give the same card from the same log.
func TestPresentersArePure(t *testing.T) {
	banned := map[string]bool{"os": true, "os/exec": true, "io": true, "io/fs": true, "io/ioutil": true, "net": true, "net/http": true, "time": true, "syscall": true, "golang.org/x/sys/unix": true, "path/filepath": true}
	files, err := filepath.Glob("present*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no presenter files: %v", err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if banned[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
