package providers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// The runner is sent only the variables a backend lists (backend.env); what
// vendors reads of any other is always empty there. Each backend's list must
// be what vendors reads for it: a name read and not listed is a setting that
// silently does nothing (as Entra ID's were), one listed and not read is
// sent for nothing. Read from vendors' source: each case of a switch on the
// backend's name, with the functions of the file it calls.
func TestRunnerIsSentWhatVendorsReads(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../vendors/vendors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	envName := regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	funcs := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			funcs[fd.Name.Name] = fd
		}
	}
	// reads is every variable name n reaches, through the file's functions.
	var reads func(n ast.Node, seen map[string]bool, out map[string]bool)
	reads = func(n ast.Node, seen map[string]bool, out map[string]bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && envName.MatchString(s) {
					out[s] = true
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && funcs[id.Name] != nil && !seen[id.Name] {
					seen[id.Name] = true
					reads(funcs[id.Name].Body, seen, out)
				}
			}
			return true
		})
	}
	read := map[string]map[string]bool{} // backend → names
	ast.Inspect(f, func(n ast.Node) bool {
		cc, ok := n.(*ast.CaseClause)
		if !ok {
			return true
		}
		for _, e := range cc.List {
			lit, ok := e.(*ast.BasicLit)
			if !ok {
				continue
			}
			name, _ := strconv.Unquote(lit.Value)
			if read[name] == nil {
				read[name] = map[string]bool{}
			}
			for _, s := range cc.Body {
				reads(s, map[string]bool{}, read[name])
			}
		}
		return true
	})
	checked := 0
	for _, b := range backends {
		names, ok := read[b.name]
		if !ok {
			continue // dsh builds it itself (the script)
		}
		checked++
		for n := range names {
			if !slices.Contains(b.env, n) {
				t.Errorf("vendors reads %s for %s, which is not in its env list: the runner never gets it", n, b.name)
			}
		}
		for _, n := range b.env {
			if !names[n] {
				t.Errorf("%s's env list has %s, which vendors never reads for it", b.name, n)
			}
		}
	}
	if checked < 5 {
		t.Errorf("found the runner's backends in %d cases of vendors' source, want 5", checked)
	}
}
