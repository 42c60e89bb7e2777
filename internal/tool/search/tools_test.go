package search

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-dev/dsh/internal/card"
)

func TestGrepContentAndContext(t *testing.T) {
	root := tree(t, map[string]string{
		"a.go":     "one\ntwo needle\nthree\nfour\nfive\nsix\nneedle seven\n",
		"sub/b.go": "needle\n",
		"c.txt":    "Needle\n",
	})
	r, m, c := call(t, Grep(), envAt(t, root), map[string]any{"pattern": "needle", "context": 1, "type": "go"})
	want := "a.go\n1-one\n2:two needle\n3-three\n--\n6-six\n7:needle seven\n\nsub/b.go\n1:needle\n\n(3 matching lines in 2 files.)"
	if r.TextOf() != want {
		t.Errorf("text:\n%s\nwant:\n%s", r.TextOf(), want)
	}
	if m == nil || m.Total != 3 || m.Truncated || len(m.Files) != 2 || m.Dir != root {
		t.Fatalf("meta %+v", m)
	}
	if got := m.Files[0].Matches[1]; got.Line != 2 || got.Ranges[0] != [2]int{4, 10} {
		t.Errorf("match %+v", got)
	}
	if sc, ok := c.(*card.SearchResult); !ok || sc.Title != "3 matching lines in 2 files" {
		t.Errorf("card %#v", c)
	}
	// ignore_case, files and count
	if got := grepFiles(t, root, "", "NEEDLE", map[string]any{"ignore_case": true}); !slices.Equal(got, []string{"a.go", "c.txt", "sub/b.go"}) {
		t.Errorf("files %v", got)
	}
	r, _, _ = call(t, Grep(), envAt(t, root), map[string]any{"pattern": "needle", "output": "count", "path": "sub"})
	if r.TextOf() != "sub/b.go:1\n\n(1 matching line in 1 file.)" {
		t.Errorf("count: %q", r.TextOf())
	}
	r, _, _ = call(t, Grep(), envAt(t, root), map[string]any{"pattern": "absent"})
	if !strings.HasPrefix(r.TextOf(), `No matches for "absent" in . (3 files searched`) {
		t.Errorf("no match: %q", r.TextOf())
	}
	for _, bad := range []map[string]any{{"pattern": "("}, {"pattern": "x", "type": "cobol"}, {"pattern": "x", "glob": "["}, {"pattern": "x", "path": "missing"}} {
		if r, _, _ := call(t, Grep(), envAt(t, root), bad); !r.IsError {
			t.Errorf("%v: %s", bad, r.TextOf())
		}
	}
}

// TestGrepPaging: head_limit bounds the entries, the footer says where to go on,
// and following it with offset yields every match exactly once.
func TestGrepPaging(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = "hit\nmiss\nhit\n"
	}
	root := tree(t, files)
	env := envAt(t, root)
	var seen []string
	for offset := 0; ; {
		r, m, _ := call(t, Grep(), env, map[string]any{"pattern": "hit", "head_limit": 7, "offset": offset})
		seen = append(seen, matchLines(m)...)
		if offset+len(matchLines(m)) >= m.Total {
			if strings.Contains(r.TextOf(), "continue with") {
				t.Errorf("the last page says to continue:\n%s", r.TextOf())
			}
			break
		}
		want := fmt.Sprintf("continue with offset=%d", offset+7)
		if offset+7 < 60 && !strings.Contains(r.TextOf(), want) {
			t.Fatalf("footer lacks %q:\n%s", want, r.TextOf())
		}
		offset += 7
		if offset > 100 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 60 || len(slices.Compact(slices.Clone(seen))) != 60 {
		t.Errorf("paging saw %d matches (%d distinct), want 60", len(seen), len(slices.Compact(slices.Clone(seen))))
	}
	// The output stays under its byte cap whatever head_limit asks.
	big := tree(t, map[string]string{"big.txt": strings.Repeat(strings.Repeat("x", 400)+" hit\n", 3000)})
	r, m, _ := call(t, Grep(), envAt(t, big), map[string]any{"pattern": "hit", "head_limit": 2000})
	if len(r.TextOf()) > maxOutput+500 || !m.Truncated || !strings.Contains(r.TextOf(), "Output capped") || m.Total != 3000 {
		t.Errorf("capped output: %d bytes, truncated %v, total %d", len(r.TextOf()), m.Truncated, m.Total)
	}
}

func TestGlobNewestFirst(t *testing.T) {
	root := tree(t, map[string]string{"old_test.go": "", "sub/new_test.go": "", "mid_test.go": "", "x.go": "", ".h/hid_test.go": ""})
	now := time.Now()
	for i, p := range []string{"old_test.go", "mid_test.go", "sub/new_test.go"} {
		at := now.Add(time.Duration(i-3) * time.Hour)
		if err := os.Chtimes(filepath.Join(root, p), at, at); err != nil {
			t.Fatal(err)
		}
	}
	_, m, c := call(t, Glob(), envAt(t, root), map[string]any{"pattern": "**/*_test.go"})
	if !slices.Equal(m.Paths, []string{"sub/new_test.go", "mid_test.go", "old_test.go"}) || m.Total != 3 {
		t.Errorf("paths %v", m.Paths)
	}
	if c == nil {
		t.Error("no card")
	}
	_, m, _ = call(t, Glob(), envAt(t, root), map[string]any{"pattern": ".h/*.go"})
	if !slices.Equal(m.Paths, []string{".h/hid_test.go"}) {
		t.Errorf("a hidden directory named by the pattern: %v", m.Paths)
	}
	_, m, _ = call(t, Glob(), envAt(t, root), map[string]any{"pattern": root + "/sub/*.go"})
	if !slices.Equal(m.Paths, []string{"sub/new_test.go"}) {
		t.Errorf("an absolute pattern: %v", m.Paths)
	}
}

func TestLSTree(t *testing.T) {
	files := map[string]string{"a.txt": "", "d/b.txt": "", "d/e/c.txt": "", "node_modules/x.js": "", ".git/HEAD": "", "empty/": ""}
	root := tree(t, files)
	r, m, _ := call(t, LS(), envAt(t, root), map[string]any{"ignore": []string{"node_modules/"}})
	want := "./\n  a.txt\n  d/\n    b.txt\n    e/\n      c.txt\n  empty/\n\n(6 entries; hidden and ignored entries are not listed.)"
	if r.TextOf() != want {
		t.Errorf("ls:\n%s\nwant:\n%s", r.TextOf(), want)
	}
	if !slices.Equal(m.Paths, []string{"a.txt", "d/", "d/b.txt", "d/e/", "d/e/c.txt", "empty/"}) {
		t.Errorf("paths %v", m.Paths)
	}
	many := map[string]string{}
	for i := range 150 {
		many[fmt.Sprintf("top%03d.txt", i)] = ""
		many[fmt.Sprintf("deep/x%03d.txt", i)] = ""
	}
	_, m, _ = call(t, LS(), envAt(t, tree(t, many)), map[string]any{})
	if len(m.Paths) != lsLimit || !m.Truncated || m.Total != 301 || !slices.Contains(m.Paths, "top149.txt") {
		t.Errorf("a large tree: %d shown of %d, truncated %v", len(m.Paths), m.Total, m.Truncated)
	}
}
