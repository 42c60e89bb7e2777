// Command gen copies into internal/highlight/lexers the chroma XML lexer
// definitions dsh needs: one for each language the read tool names (the values
// of langByExt in internal/tool/fs/present_read.go), plus every lexer those
// delegate to with <using lexer="…"/>. It copies chroma's licence alongside.
//
// Run it with `go generate ./internal/highlight`. Languages without an XML
// definition are printed; they are either Go (tokenised with go/scanner) or
// shown as plain text.
package main

import (
	"encoding/xml"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// native are the languages internal/highlight tokenises itself; no XML is needed.
var native = []string{"go", "golang"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	if err != nil {
		return fmt.Errorf("locating chroma: %w", err)
	}
	chromaDir := strings.TrimSpace(string(out))
	srcDir := filepath.Join(chromaDir, "lexers", "embedded")

	langs, err := readLangs(filepath.Join("..", "tool", "fs", "present_read.go"))
	if err != nil {
		return err
	}

	// A registry of every XML lexer resolves names exactly as the runtime one will.
	reg := chroma.NewLexerRegistry()
	files := map[chroma.Lexer]string{}
	entries, err := os.ReadDir(srcDir)
	if err != nil {
		return err
	}
	src := os.DirFS(srcDir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".xml") {
			continue
		}
		l, err := chroma.NewXMLLexer(src, e.Name())
		if err != nil {
			return err
		}
		files[reg.Register(l)] = e.Name()
	}

	want := map[string]bool{}
	var queue []string
	for _, lang := range langs {
		if slices.Contains(native, lang) {
			continue
		}
		l := reg.Get(lang)
		if l == nil {
			fmt.Printf("no XML lexer for %q: plain text\n", lang)
			continue
		}
		if f := files[l]; !want[f] {
			want[f] = true
			queue = append(queue, f)
		}
	}
	// Delegates, transitively: a lexer that is used must be in the registry.
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		used, err := delegates(filepath.Join(srcDir, f))
		if err != nil {
			return err
		}
		for _, name := range used {
			if slices.Contains(native, strings.ToLower(name)) {
				continue
			}
			l := reg.Get(name)
			if l == nil {
				return fmt.Errorf("%s delegates to %q, which chroma does not define in XML", f, name)
			}
			if d := files[l]; !want[d] {
				want[d] = true
				queue = append(queue, d)
			}
		}
	}

	const dst = "lexers"
	old, err := filepath.Glob(filepath.Join(dst, "*.xml"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for f := range want {
		if err := copyFile(filepath.Join(srcDir, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	if err := copyFile(filepath.Join(chromaDir, "COPYING"), filepath.Join(dst, "COPYING")); err != nil {
		return err
	}
	fmt.Printf("copied %d lexer definitions from %s\n", len(want), chromaDir)
	return nil
}

// readLangs returns the language ids in the langByExt map literal of a Go file.
func readLangs(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var langs []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "langByExt" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if b, ok := kv.Value.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil && !slices.Contains(langs, s) {
					langs = append(langs, s)
				}
			}
		}
		return false
	})
	if len(langs) == 0 {
		return nil, fmt.Errorf("%s: no langByExt table found", path)
	}
	slices.Sort(langs)
	return langs, nil
}

// delegates lists the lexers an XML definition uses by name.
func delegates(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var names []string
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "using" {
			for _, a := range se.Attr {
				if a.Name.Local == "lexer" {
					names = append(names, a.Value)
				}
			}
		}
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
